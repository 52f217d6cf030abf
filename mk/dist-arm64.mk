# dist-arm64: the arm64 library checked where a C user meets it. The C test
# programs of tests/c, the examples of examples/c, hev2-connect and its
# demo helper are cross-compiled with $(ARM64_CC) against $(ARM64_LIB) and
# run under $(ARM64_RUN) (mk/dist.mk): the same lists, scripts and rules'
# flags as the amd64 suite (mk/capi.mk), so a new C test runs on both.
# The library's exports are checked against hev2.h and capi/hev2.map.

DIST_TEST_TARGETS += test-arm64

# Not run under user-mode emulation (measured with qemu-aarch64-static 7.2;
# none is about the architecture):
#  test_fork    qemu's madvise does nothing and answers 0 whatever the
#               advice, so MADV_WIPEONFORK is never applied and the children
#               of a raw fork or clone are not told they are forked (they
#               enter Go and hang); and it refuses seccomp filters
#               (PR_SET_SECCOMP: EINVAL), which the run of the getpid
#               fallback needs.
#  test_no_fds  runs each case in a fresh copy of itself (execl of
#               /proc/self/exe): qemu-user does not follow execve, and without
#               a binfmt_misc entry the host kernel refuses an aarch64 ELF
#               (ENOEXEC, the case exits 127).
#  test_sigchld forks back to back while other threads connect, and qemu-user
#               stops every emulated thread for each fork (fork_start is an
#               exclusive section): 36-102 s emulated against 3 s natively
#               (2.2 s emulated with the SIGCHLD bursts but no forks), and a
#               forked child can hang inside qemu (a futex, deaf to SIGTERM)
#               holding make's output open.
ARM64_CAPI_EXCLUDED := test_fork test_no_fds test_sigchld
ARM64_CAPI_TESTS    := $(filter-out $(ARM64_CAPI_EXCLUDED),$(CAPI_TESTS))
ARM64_TEST_BINS     := $(addprefix $(ARM64_BUILD)/tests/c/,$(ARM64_CAPI_TESTS))
ARM64_EXAMPLES      := $(patsubst $(BUILD)/%,$(ARM64_BUILD)/%,$(CAPI_EXAMPLES))
ARM64_NM            := aarch64-linux-gnu-nm

.PHONY: test-arm64 test-arm64-exports test-arm64-capi test-arm64-cli

$(ARM64_LIB): capi-lib-arm64

$(ARM64_BUILD)/tests/c/%: tests/c/%.c $(CAPI_TEST_DEPS) $(ARM64_LIB)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c tests/c/util_lib.c -L$(ARM64_BUILD) -lhev2 -Wl,-rpath,$(CURDIR)/$(ARM64_BUILD) $(CAPI_TEST_LIBS)

# As on amd64: the dlopen tests do not link against the library.
$(addprefix $(ARM64_BUILD)/tests/c/,$(CAPI_DLOPEN_TESTS)): $(ARM64_BUILD)/tests/c/%: tests/c/%.c $(CAPI_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c $(CAPI_TEST_LIBS)

$(ARM64_BUILD)/examples/%: examples/c/%.c include/hev2.h $(ARM64_LIB)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(CAPI_CFLAGS) -o $@ $< -L$(ARM64_BUILD) -lhev2 -Wl,-rpath,'$$ORIGIN/..'

$(ARM64_BUILD)/hev2-connect: $(CAPI_CLI_SOURCES) cmd/hev2-connect/relay.h cmd/hev2-connect/report.h include/hev2.h $(ARM64_LIB)
	$(ARM64_CC) $(CAPI_CFLAGS) -o $@ $(CAPI_CLI_SOURCES) -L$(ARM64_BUILD) -lhev2 -Wl,-rpath,'$$ORIGIN'

$(ARM64_BUILD)/hev2-demo-listeners: cmd/hev2-connect/hev2-demo-listeners.c
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(CAPI_CFLAGS) -o $@ $<

test-arm64: test-arm64-exports test-arm64-capi test-arm64-cli ## the arm64 library's exports, its C tests, examples and hev2-connect under qemu-aarch64-static (cross-compiled)

test-arm64-exports: capi-lib-arm64 ## the arm64 library: an AArch64 ELF with the SONAME, exporting hev2.h's functions in capi/hev2.map's version nodes
	@readelf -h $(ARM64_LIB) | grep -q 'Machine: *AArch64' || { echo "test-arm64-exports: $(ARM64_LIB) is not an AArch64 ELF"; exit 1; }
	@readelf -d $(ARM64_LIB) | grep -qF 'Library soname: [libhev2.so.$(CAPI_SOVERSION)]' || { echo "test-arm64-exports: $(ARM64_LIB) lacks SONAME libhev2.so.$(CAPI_SOVERSION)"; exit 1; }
	CC=$(ARM64_CC) NM=$(ARM64_NM) tests/c/check_symbols.sh include/hev2.h $(ARM64_LIB)
	NM=$(ARM64_NM) tests/c/check_map.sh capi/hev2.map $(ARM64_LIB)

test-arm64-capi: capi-lib-arm64 $(ARM64_TEST_BINS) ## the C test programs of tests/c (but ARM64_CAPI_EXCLUDED) against the arm64 library, under qemu
	$(call run_capi_tests,$(ARM64_BUILD),$(CURDIR)/$(ARM64_BUILD)/libhev2.so,$(ARM64_RUN),$(ARM64_CAPI_TESTS))

test-arm64-cli: capi-lib-arm64 $(ARM64_BUILD)/hev2-connect $(ARM64_BUILD)/hev2-demo-listeners $(ARM64_EXAMPLES) ## hev2-connect and the C examples for arm64 through tests/c/test_cli.sh, under qemu
	HEV2_RUNNER="$(ARM64_RUN)" tests/c/test_cli.sh $(ARM64_BUILD)/hev2-connect
