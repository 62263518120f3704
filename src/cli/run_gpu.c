/* STUB: placeholder until the GPU runtime lands; replace this whole file. */
#include "run.h"

int cli_run_gpu(const RunJob *job)
{
	(void)job;
	cli_error("no GPU support yet; use --cpu");
	return EXIT_ERROR;
}
