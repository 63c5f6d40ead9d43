/*
 * tests/remote/provider_leak.c — linked into the programs that run fab0
 * (remote_test, the conformance suite), so that libfabric's own leak does
 * not fail them under LeakSanitizer (README, "Remote memory").
 *
 * ASan builds: libfabric 1.17's tcp;ofi_rxm sometimes keeps a connection
 * object (336 + 40 bytes) that it allocated inside fi_cq_read for a peer
 * that went away while connecting (stop_flush: an importer that stops and
 * closes right after its first post), and does not free it when the
 * endpoint is closed. fi_cq_read hands the caller nothing to free, so a
 * leak allocated under it is the provider's own; every other libfabric
 * allocation (fi_domain, fi_endpoint, fi_av_open, fi_mr_reg, ...) is still
 * checked. The full unwinder is needed to see fi_cq_read in the stack:
 * libfabric has no frame pointers.
 */
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);

const char *__lsan_default_suppressions(void)
{
	return "leak:fi_cq_read\n";
}

const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}
