/* The functions PolyBench/C's polybench.h declares and its benchmarks'
   main calls, for the drop-in harness (scripts/polybench/harness.sh):
   aligned zeroed allocation and a wall-clock timer (POLYBENCH_TIME). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

double polybench_program_total_flops = 0;
static double polybench_t_start, polybench_t_end;

void *polybench_alloc_data(unsigned long long int n, int elt_size)
{
  size_t bytes = (size_t)n * (size_t)elt_size;
  void *p = NULL;
  if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0) {
    fprintf(stderr, "[PolyBench] posix_memalign: cannot allocate memory\n");
    exit(1);
  }
  memset(p, 0, bytes);
  return p;
}

void polybench_free_data(void *ptr) { free(ptr); }

void polybench_flush_cache(void) {}

void polybench_prepare_instruments(void) {}

void polybench_timer_start(void) { polybench_t_start = omp_get_wtime(); }

void polybench_timer_stop(void) { polybench_t_end = omp_get_wtime(); }

void polybench_timer_print(void) { printf("%0.6f\n", polybench_t_end - polybench_t_start); }
