/*
 * stress/symbolize_check.c — the sanitizer set-up check that ./run makes
 * before any sanitizer suite: a sanitized program must be able to name its
 * own stack frame. Without llvm-symbolizer every frame of every report is
 * "<null>": reports cannot be read, and the TSan self-check, which matches
 * the function named in a report, could not tell a deliberate race from any
 * other. Exit 0 when the frame is named, 1 (with the reason) otherwise.
 */
#include <sanitizer/common_interface_defs.h>
#include <stdio.h>
#include <string.h>

/* Writes the symbolized frame of its caller into buf. */
__attribute__((noinline)) static void name_caller(char *buf, size_t len)
{
	__sanitizer_symbolize_pc(__builtin_return_address(0), "%f", buf, len);
}

int main(void)
{
	char frame[256] = "";

	name_caller(frame, sizeof frame);
	if (strcmp(frame, "main") != 0) {
		fprintf(stderr,
			"symbolize_check: the sanitizer runtime named this frame \"%s\", not \"main\": it cannot\n"
			"symbolize. Install llvm-symbolizer (Debian package llvm-14) and point the sanitizers\n"
			"at it (ASAN_SYMBOLIZER_PATH, TSAN_SYMBOLIZER_PATH, UBSAN_SYMBOLIZER_PATH).\n",
			frame);
		return 1;
	}
	printf("symbolize_check: sanitizer reports name their frames (%s)\n", frame);
	return 0;
}
