/*
 * progress.c: the progress line of long commands (cli.h).
 *
 * A thread wakes five times a second and, once the work has taken more than
 * a second, rewrites one line of stderr in place: "fusec run: PHASE (3 s)".
 * Only on a terminal, and not while FUSEC_LOG is on (its lines would mix
 * with it): a log file or a pipe never sees the line. progress_stop erases
 * it, so what the command prints next starts on a clean line; cli_error
 * stops it first too.
 */
#include "cli.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

enum { SHOW_AFTER_MS = 1000, TICK_MS = 200 };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool running, stop, shown;
	const char *what, *phase;
	struct timespec t0;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static double since_ms(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void *progress_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&P.mu);
	while (!P.stop) {
		struct timespec wake;
		clock_gettime(CLOCK_REALTIME, &wake);
		wake.tv_nsec += TICK_MS * 1000000L;
		wake.tv_sec += wake.tv_nsec / 1000000000L;
		wake.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&P.cv, &P.mu, &wake);
		double ms = since_ms(&P.t0);
		if (P.stop || ms < SHOW_AFTER_MS)
			continue;
		fprintf(stderr, "\r\033[Kfusec %s: %s (%.0f s)", P.what, P.phase ? P.phase : "working", ms / 1e3);
		fflush(stderr);
		P.shown = true;
	}
	pthread_mutex_unlock(&P.mu);
	return NULL;
}

void progress_start(const char *what)
{
	if (P.running || !isatty(STDERR_FILENO) || log_enabled())
		return;
	P.what = what;
	P.phase = NULL;
	P.stop = P.shown = false;
	clock_gettime(CLOCK_MONOTONIC, &P.t0);
	P.running = pthread_create(&P.thread, NULL, progress_thread, NULL) == 0;
}

void progress_phase(const char *phase)
{
	if (!P.running)
		return;
	pthread_mutex_lock(&P.mu);
	P.phase = phase;
	pthread_mutex_unlock(&P.mu);
}

void progress_stop(void)
{
	if (!P.running)
		return;
	pthread_mutex_lock(&P.mu);
	P.stop = true;
	pthread_cond_signal(&P.cv);
	pthread_mutex_unlock(&P.mu);
	pthread_join(P.thread, NULL);
	P.running = false;
	if (P.shown)
		fputs("\r\033[K", stderr);
}
