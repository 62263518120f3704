/*
 * fileio.c: opening and reading named files without hanging (see fileio.h).
 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

const char *file_kind(unsigned mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

int file_open_regular(const char *path, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			snprintf(why, whylen, "cannot open: %s", strerror(EISDIR));
		else
			snprintf(why, whylen, "not a regular file (%s)", file_kind(st.st_mode));
		close(fd);
		return -1;
	}
	/* Regular files never block; clearing the flag keeps reads plain. */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

char *file_read_fd(int fd, size_t cap, size_t *len, char *why, size_t whylen)
{
	size_t n = 0, size = 1 << 16;
	char *buf = malloc(size);
	while (buf && n <= cap) { /* at most cap + 1 bytes: enough to tell "over the cap" */
		if (n == size - 1) {
			char *nb = realloc(buf, size * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			size *= 2;
		}
		size_t want = size - 1 - n;
		if (want > cap + 1 - n)
			want = cap + 1 - n;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, whylen, "%s", strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (!buf) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

char *file_read_source(const char *path, size_t *len, char *err, size_t errlen)
{
	char why[512];
	int fd = file_open_regular(path, why, sizeof why);
	if (fd < 0) {
		/* "cannot read F: Is a directory" rather than "cannot read F: cannot open: ..." */
		const char *w = strncmp(why, "cannot open: ", 13) == 0 ? why + 13 : why;
		snprintf(err, errlen, "cannot read %s: %s", path, w);
		return NULL;
	}
	char *text = file_read_fd(fd, (size_t)FZ_MAX_SOURCE_BYTES * 2, len, why, sizeof why);
	close(fd);
	if (!text)
		snprintf(err, errlen, "cannot read %s: %s", path, why);
	return text;
}
