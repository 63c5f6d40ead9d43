/*
 * fuzz/replay_main.c — runs the fuzzer's inputs without libFuzzer (any
 * compiler): each argument is a file or a directory of files, each file is
 * fed once to LLVMFuzzerTestOneInput. Exits non-zero if an argument cannot
 * be read or there was no input at all (an empty corpus proves nothing); a
 * divergence abort()s, as under libFuzzer.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ops.h"

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		perror(path);
		if (f != NULL)
			fclose(f);
		return 1;
	}
	data = malloc(size > 0 ? (size_t)size : 1);
	if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) {
		perror(path);
		free(data);
		fclose(f);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of a directory, in name order (reproducible runs). */
static int replay_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	if (d == NULL) {
		perror(dir);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char **bigger = realloc(names, (n + 1) * sizeof(*names));

		if (bigger == NULL)
			abort();
		names = bigger;
		if (asprintf(&names[n++], "%s/%s", dir, de->d_name) < 0)
			abort();
	}
	closedir(d);
	qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; i < n; i++) {
		rc |= replay_file(names[i]);
		free(names[i]);
	}
	free(names);
	*count += (int)n;
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0, count = 0;
	struct stat st;

	LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			rc |= replay_dir(argv[i], &count);
		} else {
			rc |= replay_file(argv[i]);
			count++;
		}
	}
	if (count == 0) {
		fprintf(stderr, "fuzz_replay: no input to replay\n");
		return 1;
	}
	printf("fuzz_replay: %d inputs replayed, no divergence\n", count);
	return rc;
}
