/*
 * fileio.h: opening and reading the files a user names (programs, .npy
 * inputs) and the ones the kernel cache finds, so that none of them can hang
 * or mislead fusec.
 *
 * A path is opened without blocking (O_NONBLOCK: a FIFO with no writer would
 * block open(), and one with a writer that never writes would block read())
 * and checked with fstat before a byte is read: only a regular file is
 * accepted. Directories, FIFOs, sockets and devices are refused with a
 * message that says what the path is. Standard input ("-" on the command
 * line) is the one stream read as it comes: it is what a user pipes in.
 */
#ifndef FUSEC_FILEIO_H
#define FUSEC_FILEIO_H

#include <stdbool.h>
#include <stddef.h>

/* Open `path` read-only if it is a regular file (O_CLOEXEC, blocking again
 * once checked); else -1 with "cannot open: REASON" or "not a regular file
 * (a FIFO)" in why. */
int file_open_regular(const char *path, char *why, size_t whylen);

/* What a non-regular file is ("a directory", "a FIFO", ...) for messages. */
const char *file_kind(unsigned mode);

/* Read all of `fd` into malloc'ed memory (NUL-terminated, *len bytes); stop
 * after `cap` bytes plus one (so that a caller can tell a file over a limit
 * from one at it without reading an endless stream). NULL with a reason in
 * why (errno's text, or "out of memory"). */
char *file_read_fd(int fd, size_t cap, size_t *len, char *why, size_t whylen);

/* A program's text: `path` must be a regular file; reading stops at twice the
 * source limit (FZ_MAX_SOURCE_BYTES), which the pipeline then reports. On
 * failure NULL and "cannot read PATH: REASON" in err. The one function that
 * reads a source file, for the CLI and fz_program_compile_file alike. */
char *file_read_source(const char *path, size_t *len, char *err, size_t errlen);

#endif
