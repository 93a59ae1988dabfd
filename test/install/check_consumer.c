/* A program built against an installed libvmsim-check: a short stress
 * run of the default lock kind and strategy must pass. */
#include <stdio.h>

#include <vmsim/check/stress.h>
#include <vmsim/vmsim.h>

int main(void)
{
	struct vs_stress_config cfg = { .faults = 1000, .ops = 20,
					.max_ms = 500 };
	struct vs_stress_report rep;
	int err = vs_stress_run(&cfg, &rep);

	if (err || rep.violations) {
		fprintf(stderr, "vs_stress_run: %s; %lu violations: %s\n",
			vs_strerror(err), rep.violations, rep.first);
		return 1;
	}
	return 0;
}
