/*
 * fuzz_npy.c: libFuzzer target for the .npy reader.
 *
 * npy_read takes a path, as `fusec run --in` does, so the bytes are written
 * to a temporary file (one per process, in $TMPDIR) and read back: this
 * fuzzes the reader exactly as it runs, without a second, in-memory reader
 * to keep in step. An array that reads must be consistent (its byte count is
 * its shape's, every element decodes), and must survive npy_write and a
 * second npy_read bit for bit (bf16, read from '<V2' files, comes back as
 * the f32 it is written as, each value widened exactly); a file that is
 * refused must say why, naming the file.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensor.h"

static char in_path[4096], out_path[4096];

static void check(bool ok, const char *what, const char *err)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_npy: invariant broken: %s (%s)\n", what, err ? err : "");
	abort();
}

static void cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(in_path, sizeof in_path, "%s/fuzz_npy.%ld.in.npy", tmp && *tmp ? tmp : "/tmp", (long)getpid());
	snprintf(out_path, sizeof out_path, "%s/fuzz_npy.%ld.out.npy", tmp && *tmp ? tmp : "/tmp", (long)getpid());
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(in_path, "wb");
	check(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "write the input file", in_path);

	char err[1024] = "";
	Tensor t;
	memset(&t, 0x5A, sizeof t); /* npy_read must set every field it returns */
	if (!npy_read(in_path, &t, err, sizeof err)) {
		check(strncmp(err, in_path, strlen(in_path)) == 0 && strlen(err) > strlen(in_path) + 2,
		      "a refused file has a message naming it", err);
		return 0;
	}
	check(t.rank >= 0 && t.rank <= FZ_MAX_RANK && t.dtype < FZ_DTYPE_COUNT, "rank and dtype in range", NULL);
	int64_t n = tensor_numel(&t);
	check(n >= 0, "the element count does not overflow", NULL);
	check(tensor_nbytes(&t) == (size_t)n * fz_dtype_size(t.dtype), "bytes = elements * dtype size", NULL);
	check(size >= tensor_nbytes(&t), "the data came from the file", NULL);
	for (int64_t e = 0; e < n; e++)
		(void)tensor_get(&t, e);

	check(npy_write(out_path, &t, err, sizeof err), "an array that was read can be written", err);
	Tensor u;
	check(npy_read(out_path, &u, err, sizeof err), "an array that was written can be read", err);
	/* bf16 (read from '<V2') is written widened to f32, exactly: NumPy has no bf16 */
	fz_dtype back = t.dtype == FZ_BF16 ? FZ_F32 : t.dtype;
	check(u.dtype == back && u.rank == t.rank && memcmp(u.shape, t.shape, sizeof(int64_t) * (size_t)t.rank) == 0,
	      "the round trip keeps dtype (bf16: f32) and shape", NULL);
	if (t.dtype == FZ_BF16) { /* the same shape, so n elements */
		for (int64_t e = 0; e < n; e++) {
			uint16_t h;
			uint32_t w;
			memcpy(&h, (const char *)t.data + 2 * e, 2);
			memcpy(&w, (const char *)u.data + 4 * e, 4);
			check(w == (uint32_t)h << 16, "the round trip widens bf16 to f32 bit for bit", NULL);
		}
	} else {
		check(tensor_nbytes(&u) == tensor_nbytes(&t) &&
		          (tensor_nbytes(&t) == 0 || memcmp(u.data, t.data, tensor_nbytes(&t)) == 0),
		      "the round trip keeps the data bit for bit", NULL);
	}
	tensor_free(&u);
	tensor_free(&t);
	return 0;
}
