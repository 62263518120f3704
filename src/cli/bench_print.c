/*
 * bench_print.c: `fusec bench`'s report, a table for people or one JSON object
 * (--json, strict: a value that is not a finite number is null).
 */
#include "bench.h"

#include <stdio.h>

#include "json.h"

static double floor_us(const Bench *b) { return (double)b->min_bytes / (b->copy_gbps * 1e3); }

static void json_num(JsonWriter *w, const char *key, double v)
{
	json_key(w, key);
	json_number(w, v);
}

static void json_mode(JsonWriter *w, const Bench *b, const ModeStats *ms)
{
	json_key(w, ms->name);
	json_object_begin(w);
	json_key(w, "kernels");
	json_int(w, ms->kernels);
	json_key(w, "bytes_moved");
	json_int(w, ms->bytes_moved);
	if (ms->measured) {
		json_num(w, "median_us", ms->median_us);
		json_num(w, "min_us", ms->min_us);
		json_num(w, "gbps", (double)b->min_bytes / ms->median_us / 1e3);
		json_num(w, "pct_floor", 100 * floor_us(b) / ms->median_us);
		json_num(w, "host_us_per_call", ms->host_us);
		json_num(w, "wall_us_per_call", ms->wall_us);
		if (b->o.graph) {
			json_num(w, "graph_host_us_per_call", ms->graph_host_us);
			json_num(w, "graph_wall_us_per_call", ms->graph_wall_us);
			json_num(w, "graph_capture_us", ms->capture_us);
			json_num(w, "auto_host_us_per_call", ms->auto_host_us);
			json_num(w, "auto_wall_us_per_call", ms->auto_wall_us);
			json_num(w, "pushed_host_us_per_call", ms->pushed_host_us);
			json_num(w, "pushed_wall_us_per_call", ms->pushed_wall_us);
		}
		json_num(w, "compile_ms", ms->compile_ms);
		json_num(w, "jit_ms", ms->jit_ms);
		json_key(w, "compiles");
		json_uint(w, ms->compiles);
		json_key(w, "disk_hits");
		json_uint(w, ms->disk_hits);
	}
	json_object_end(w);
}

static void json_device(JsonWriter *w, const Bench *b)
{
	char cc[32];
	snprintf(cc, sizeof cc, "%d.%d", b->info.cc_major, b->info.cc_minor);
	json_key(w, "device");
	json_string(w, b->info.name);
	json_key(w, "cc");
	json_string(w, cc);
	json_key(w, "sm_count");
	json_int(w, b->info.sm_count);
	json_key(w, "l2_bytes");
	json_int(w, b->l2_bytes);
	json_key(w, "reps");
	json_int(w, b->o.reps);
	json_key(w, "warmup");
	json_int(w, b->o.warmup);
	json_key(w, "buffer_sets");
	json_int(w, b->nsets);
	json_key(w, "seed");
	json_uint(w, b->o.seed);
	json_key(w, "copy");
	json_object_begin(w);
	json_key(w, "bytes_moved");
	json_int(w, b->copy_bytes);
	json_num(w, "median_us", b->copy_us);
	json_num(w, "gbps", b->copy_gbps);
	json_object_end(w);
	json_num(w, "floor_us", floor_us(b));
}

/* One JSON object (json.h: strict, non-finite numbers are null). */
void bench_print_json(const Bench *b)
{
	const Graph *g = b->g;
	const ModeStats *f = &b->mode[0], *p = &b->mode[1];
	StrBuf sb;
	JsonWriter w;
	sb_init(&sb, g->arena);
	json_init(&w, &sb);
	json_object_begin(&w);
	json_key(&w, "program");
	json_string(&w, b->o.file);
	json_key(&w, "dims");
	json_object_begin(&w);
	for (int k = 0; k < g->ndims; k++) {
		json_key(&w, g->dims[k]);
		json_int(&w, b->dims[k]);
	}
	json_object_end(&w);
	json_key(&w, "min_bytes");
	json_int(&w, b->min_bytes);
	if (!b->o.dry_run)
		json_device(&w, b);
	for (int m = 0; m < NMODES; m++)
		if (b->mode[m].on)
			json_mode(&w, b, &b->mode[m]);
	if (f->on && p->on) {
		json_num(&w, "ideal_speedup", (double)p->bytes_moved / (double)b->min_bytes);
		if (f->measured && p->measured) {
			json_num(&w, "speedup", p->median_us / f->median_us);
			json_num(&w, "outputs_rel_diff", b->out_rel_diff);
			json_key(&w, "outputs_nan");
			json_bool(&w, b->out_nan);
		}
	}
	json_object_end(&w);
	sb_puts(&sb, "\n");
	cli_write(sb.buf, sb.len);
}

static void print_head(const Bench *b)
{
	const Graph *g = b->g;
	printf("%s ", b->o.file);
	for (int k = 0; k < g->ndims; k++)
		printf(" %s=%lld", g->dims[k], (long long)b->dims[k]);
	printf("%s\n", b->o.dry_run ? "  (dry run: no GPU used)" : "");
	if (!b->o.dry_run) {
		printf("device: %s (sm_%d%d, %d SMs, %.0f MiB L2)\n", b->info.name, b->info.cc_major, b->info.cc_minor,
		       b->info.sm_count, b->l2_bytes / 1048576.0);
		printf("copy bandwidth: %.1f GB/s (cuMemcpyDtoD, %lld MiB read + %lld MiB written)\n", b->copy_gbps,
		       (long long)(b->copy_bytes >> 21), (long long)(b->copy_bytes >> 21));
	}
	printf("minimum bytes: %lld (every input read once, every output written once)", (long long)b->min_bytes);
	if (!b->o.dry_run)
		printf("; floor %.2f us", floor_us(b));
	printf("\n");
	if (!b->o.dry_run)
		printf("timing: median of %d calls after %d warm-up, CUDA events around each; %d buffer set%s\n",
		       b->o.reps, b->o.warmup, b->nsets, b->nsets == 1 ? "" : "s (rotated: 4x the L2)");
}

/* --graph: host (and wall) microseconds per call in the other launch modes. */
static void print_graph_lines(const ModeStats *ms)
{
	printf("%s, replaying a CUDA graph: %.2f us/call on the host, %.2f us/call wall (capturing it: %.1f us)\n",
	       ms->title, ms->graph_host_us, ms->graph_wall_us, ms->capture_us);
	printf("%s, default (graph after %d same calls): %.2f us/call on the host, %.2f us/call wall\n", ms->title,
	       rt_graph_after(), ms->auto_host_us, ms->auto_wall_us);
	printf("%s, no context current (pushed and popped): %.2f us/call on the host, %.2f us/call wall\n", ms->title,
	       ms->pushed_host_us, ms->pushed_wall_us);
}

void bench_print_table(const Bench *b)
{
	const ModeStats *f = &b->mode[0], *p = &b->mode[1];
	print_head(b);
	printf("\n%-8s %11s %8s %14s", "mode", "median us", "kernels", "bytes moved");
	if (!b->o.dry_run)
		printf(" %9s %8s %13s %13s %10s", "eff GB/s", "% floor", "host us/call", "wall us/call", "jit ms");
	printf("\n");
	for (int m = 0; m < NMODES; m++) {
		const ModeStats *ms = &b->mode[m];
		if (!ms->on)
			continue;
		if (ms->measured)
			printf("%-8s %11.2f %8d %14lld %9.1f %8.1f %13.2f %13.2f %10.1f\n", ms->title, ms->median_us,
			       ms->kernels, (long long)ms->bytes_moved, (double)b->min_bytes / ms->median_us / 1e3,
			       100 * floor_us(b) / ms->median_us, ms->host_us, ms->wall_us, ms->jit_ms);
		else
			printf("%-8s %11s %8d %14lld\n", ms->title, "-", ms->kernels, (long long)ms->bytes_moved);
	}
	for (int m = 0; b->o.graph && m < NMODES; m++)
		if (b->mode[m].measured)
			print_graph_lines(&b->mode[m]);
	if (f->on && p->on) {
		double ideal = (double)p->bytes_moved / (double)b->min_bytes;
		if (f->measured && p->measured)
			printf("\nfused / per-op speedup: %.2fx (ideal, per-op bytes moved / minimum: %.2fx)\n"
			       "fused vs per-op outputs: relative difference %.3g%s\n",
			       p->median_us / f->median_us, ideal, b->out_rel_diff, b->out_nan ? " (NaN in the outputs)" : "");
		else
			printf("\nideal fused / per-op speedup (per-op bytes moved / minimum): %.2fx\n", ideal);
	}
}
