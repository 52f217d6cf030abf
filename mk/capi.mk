# capi: libhev2.so (the C ABI of include/hev2.h), its pkg-config file, the
# hev2-connect tool, the C test suite and the C ABI benchmark.
# The version has one source: HEV2_VERSION_MAJOR/MINOR/PATCH of include/hev2.h.
# The SONAME carries MAJOR (the header's compatibility rule: same MAJOR, not
# newer); hev2.pc, the gem and the Python package carry all three (the gem's
# and the package's are checked by `make lint-versions`).
CAPI_VERSION   := $(shell awk '$$2 == "HEV2_VERSION_MAJOR" { a = $$3 } $$2 == "HEV2_VERSION_MINOR" { b = $$3 } \
	$$2 == "HEV2_VERSION_PATCH" { c = $$3 } END { print a "." b "." c }' include/hev2.h)
CAPI_SOVERSION := $(firstword $(subst ., ,$(CAPI_VERSION)))
CAPI_LIB       := $(BUILD)/libhev2.so.$(CAPI_VERSION)
CAPI_CFLAGS    := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude
CAPI_LDFLAGS   := -L$(BUILD) -lhev2 -Wl,-rpath,'$$ORIGIN'
PREFIX         ?= /usr/local

BUILD_TARGETS += capi
TEST_TARGETS  += test-capi
BENCH_TARGETS += bench-capi
DEB_PACKAGES  += gcc g++ libc6-dev libasan8 libubsan1 make strace iproute2 binutils pkg-config jq
# test-capi-stdio: a real sshd and ssh client, git over ssh.
DEB_PACKAGES  += openssh-server openssh-client git

.PHONY: capi capi-lib capi-asan-lib install test-capi test-capi-go test-capi-plain test-capi-asan \
	test-capi-header test-capi-cli test-capi-install test-capi-scenarios test-capi-stdio bench-capi bench-capi-startup demo-capi

CAPI_EXAMPLES := $(BUILD)/examples/simple_connect $(BUILD)/examples/event_loop

capi: capi-lib $(BUILD)/hev2-connect $(BUILD)/hev2.pc $(BUILD)/hev2-uninstalled.pc $(CAPI_EXAMPLES) ## libhev2.so, hev2-connect, hev2.pc and the C examples

# go build's flags for a c-shared library: $(call CAPI_SHARED_FLAGS,SONAME,VERSION_SCRIPT).
# libhev2's, and those of the empty library bench_startup measures it
# against (bench/emptylib): the floor must be built as libhev2 is.
CAPI_SHARED_FLAGS = -buildmode=c-shared -trimpath \
	  -ldflags "-s -extldflags \"-Wl,-soname,$(1) -Wl,--version-script=$(2)\""

# go build decides itself whether anything changed (its cache makes a no-op
# build fast); the library file is only replaced when the output differs, so
# what links against it is not rebuilt for nothing.
capi-lib: ## libhev2.so only (go build -buildmode=c-shared)
	@mkdir -p $(BUILD)
	$(GO) build $(call CAPI_SHARED_FLAGS,libhev2.so.$(CAPI_SOVERSION),$(CURDIR)/capi/hev2.map) \
	  -o $(BUILD)/.libhev2.new ./capi
	@rm -f $(BUILD)/.libhev2.h $(BUILD)/.libhev2.new.h
	@if cmp -s $(BUILD)/.libhev2.new $(CAPI_LIB); then rm -f $(BUILD)/.libhev2.new; else mv $(BUILD)/.libhev2.new $(CAPI_LIB); fi
	@ln -sf libhev2.so.$(CAPI_VERSION) $(BUILD)/libhev2.so.$(CAPI_SOVERSION)
	@ln -sf libhev2.so.$(CAPI_SOVERSION) $(BUILD)/libhev2.so

$(CAPI_LIB): capi-lib

# hev2-connect's C files (the tool, its --stdio relay, its report output).
CAPI_CLI_SOURCES := cmd/hev2-connect/hev2-connect.c cmd/hev2-connect/relay.c cmd/hev2-connect/report.c

$(BUILD)/hev2-connect: $(CAPI_CLI_SOURCES) cmd/hev2-connect/relay.h cmd/hev2-connect/report.h include/hev2.h $(CAPI_LIB)
	$(CC) $(CAPI_CFLAGS) -o $@ $(CAPI_CLI_SOURCES) $(CAPI_LDFLAGS)

$(BUILD)/hev2.pc: hev2.pc.in
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(CAPI_VERSION)|g' $< > $@

# The build tree as pkg-config sees it: with PKG_CONFIG_PATH=$(BUILD),
# `pkg-config hev2` prefers this file over hev2.pc (pkg-config's rule for
# NAME-uninstalled.pc), so an extension builds against this tree with the
# same pkg-config line it uses against an installed libhev2.
$(BUILD)/hev2-uninstalled.pc: hev2.pc.in
	@mkdir -p $(BUILD)
	sed -e 's|^libdir=.*|libdir=$(CURDIR)/$(BUILD)|' -e 's|^includedir=.*|includedir=$(CURDIR)/include|' \
	    -e 's|@PREFIX@|$(CURDIR)|g' -e 's|@VERSION@|$(CAPI_VERSION)|g' $< > $@

# make install PREFIX=/opt/hev2 [DESTDIR=/tmp/stage]
install: capi ## install library, header, pkg-config file and hev2-connect (PREFIX, DESTDIR)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(CAPI_LIB) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libhev2.so.$(CAPI_VERSION) $(DESTDIR)$(PREFIX)/lib/libhev2.so.$(CAPI_SOVERSION)
	ln -sf libhev2.so.$(CAPI_SOVERSION) $(DESTDIR)$(PREFIX)/lib/libhev2.so
	install -m 0644 include/hev2.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(CAPI_VERSION)|g' hev2.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hev2.pc
	$(CC) $(CAPI_CFLAGS) -o $(DESTDIR)$(PREFIX)/bin/hev2-connect $(CAPI_CLI_SOURCES) -L$(BUILD) -lhev2 -Wl,-rpath,$(PREFIX)/lib

# The two loopback servers of the demo and of test-capi-cli (no libhev2).
$(BUILD)/hev2-demo-listeners: cmd/hev2-connect/hev2-demo-listeners.c
	@mkdir -p $(BUILD)
	$(CC) $(CAPI_CFLAGS) -o $@ $<

# The C examples (examples/c, each one file, linked with libhev2).
$(BUILD)/examples/%: examples/c/%.c include/hev2.h $(CAPI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -o $@ $< -L$(BUILD) -lhev2 -Wl,-rpath,'$$ORIGIN/..'

# demo-capi: the fallback timeline on loopback (make demo runs it).
demo-capi: capi $(BUILD)/hev2-demo-listeners ## the demo: hev2-connect -v racing ::1 (SYNs dropped) against 127.0.0.1, as a timeline and a picture (build/demo/race.svg)
	@cmd/hev2-connect/demo.sh $(BUILD)

# ---- the C test suite (tests/c) ---------------------------------------------
CAPI_TESTS     := test_api test_badinput test_storm test_fork test_sigchld test_jobs test_no_fds test_driven test_report test_trace test_history
# These load the library themselves (dlopen) and are given its path.
CAPI_DLOPEN_TESTS := test_sigchld test_no_fds
CAPI_TEST_BINS := $(addprefix $(BUILD)/tests/c/,$(CAPI_TESTS))
CAPI_TEST_LIBS := -lpthread -ldl

CAPI_TEST_DEPS := tests/c/util.c tests/c/util_lib.c tests/c/util.h tests/c/check.h include/hev2.h

$(BUILD)/tests/c/%: tests/c/%.c $(CAPI_TEST_DEPS) $(CAPI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c tests/c/util_lib.c -L$(BUILD) -lhev2 -Wl,-rpath,$(CURDIR)/$(BUILD) $(CAPI_TEST_LIBS)

# test_sigchld loads the library itself (dlopen, after installing its
# handlers), and test_no_fds after using up its fds, so they must not link
# against it.
$(addprefix $(BUILD)/tests/c/,$(CAPI_DLOPEN_TESTS)): $(BUILD)/tests/c/%: tests/c/%.c $(CAPI_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c $(CAPI_TEST_LIBS)

# ---- sanitizers ---------------------------------------------------------------
# valgrind cannot judge a Go c-shared library (thousands of false reports
# from the Go runtime's own stack and heap handling), so the suite runs a
# second time under AddressSanitizer + UBSan on both sides: the test
# programs are built with -fsanitize=address,undefined and the library with
# `go build -asan` (Go code and capi's C instrumented, Go's allocator
# reporting to ASan). LeakSanitizer checks the C heap at exit.
CAPI_ASAN_DIR   := $(BUILD)/asan
CAPI_ASAN_LIB   := $(CAPI_ASAN_DIR)/libhev2.so.$(CAPI_SOVERSION)
CAPI_SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CAPI_SAN_ENV    := ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CAPI_ASAN_BINS  := $(addprefix $(CAPI_ASAN_DIR)/tests/c/,$(CAPI_TESTS))

capi-asan-lib: ## libhev2.so built with go build -asan (for test-capi-asan)
	@mkdir -p $(CAPI_ASAN_DIR)
	$(GO) build -asan -buildmode=c-shared -trimpath \
	  -ldflags "-extldflags \"-Wl,-soname,libhev2.so.$(CAPI_SOVERSION) -Wl,--version-script=$(CURDIR)/capi/hev2.map\"" \
	  -o $(CAPI_ASAN_DIR)/.libhev2.new ./capi
	@rm -f $(CAPI_ASAN_DIR)/.libhev2.h
	@if cmp -s $(CAPI_ASAN_DIR)/.libhev2.new $(CAPI_ASAN_LIB); then rm -f $(CAPI_ASAN_DIR)/.libhev2.new; else mv $(CAPI_ASAN_DIR)/.libhev2.new $(CAPI_ASAN_LIB); fi
	@ln -sf libhev2.so.$(CAPI_SOVERSION) $(CAPI_ASAN_DIR)/libhev2.so

$(CAPI_ASAN_DIR)/tests/c/%: tests/c/%.c $(CAPI_TEST_DEPS) capi-asan-lib
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) $(CAPI_SAN_FLAGS) -Itests/c -o $@ $< tests/c/util.c tests/c/util_lib.c -L$(CAPI_ASAN_DIR) -lhev2 -Wl,-rpath,$(CURDIR)/$(CAPI_ASAN_DIR) $(CAPI_TEST_LIBS)

$(addprefix $(CAPI_ASAN_DIR)/tests/c/,$(CAPI_DLOPEN_TESTS)): $(CAPI_ASAN_DIR)/tests/c/%: tests/c/%.c $(CAPI_TEST_DEPS) capi-asan-lib
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) $(CAPI_SAN_FLAGS) -Itests/c -o $@ $< tests/c/util.c $(CAPI_TEST_LIBS)

# ---- test-capi ----------------------------------------------------------------
test-capi: test-capi-go test-capi-header test-capi-plain test-capi-asan test-capi-cli test-capi-install test-capi-scenarios test-capi-stdio ## every C test: header, plain, asan, cli, install, scenarios, stdio

# run_capi_tests DIR LIB [RUNNER] [TESTS]: the test programs TESTS
# (CAPI_TESTS when not given) of DIR, the dlopen ones given LIB, each run
# under RUNNER when given (a command prefix: another architecture's build
# runs under its emulator), with the time each took.
define run_capi_tests
	@set -e; for t in $(or $(4),$(CAPI_TESTS)); do \
	  echo "-- $(1)/tests/c/$$t"; start=$$(date +%s%N); \
	  if echo " $(CAPI_DLOPEN_TESTS) " | grep -q " $$t "; then $(CAPI_SAN_ENV) $(3) $(1)/tests/c/$$t $(2); else $(CAPI_SAN_ENV) $(3) $(1)/tests/c/$$t; fi; \
	  echo "   $$t: $$(( ($$(date +%s%N) - start) / 1000000 )) ms"; \
	done
endef

# capi's own Go tests (what needs no C caller: conversions, stats helpers).
test-capi-go: ## go test ./capi (its Go unit tests; the fuzz targets run as seeds)
	$(GO) test -count=1 ./capi

test-capi-plain: capi $(CAPI_TEST_BINS) ## the C test programs of tests/c against libhev2.so
	$(call run_capi_tests,$(BUILD),$(CURDIR)/$(BUILD)/libhev2.so)

test-capi-asan: $(CAPI_ASAN_BINS) ## the C test programs under AddressSanitizer + UBSan (library too)
	$(call run_capi_tests,$(CAPI_ASAN_DIR),$(CURDIR)/$(CAPI_ASAN_LIB))

# The exported symbols are hev2.h's functions, in capi/hev2.map's version
# nodes; hev2.h alone compiles (C99 pedantic and C++) and links.
test-capi-header: capi ## exported symbols equal hev2.h's functions, versioned as capi/hev2.map says; hev2.h alone compiles (C99, C++)
	@mkdir -p $(BUILD)/tests
	tests/c/check_symbols.sh include/hev2.h $(BUILD)/libhev2.so
	tests/c/check_map.sh capi/hev2.map $(BUILD)/libhev2.so
	tests/c/check_exports.sh capi
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -o $(BUILD)/tests/header_only tests/c/header_only.c -L$(BUILD) -lhev2 -Wl,-rpath,$(CURDIR)/$(BUILD)
	$(BUILD)/tests/header_only
	$(CXX) -x c++ -Wall -Wextra -Werror -Iinclude -c -o $(BUILD)/tests/header_only_cxx.o tests/c/header_only.c
	@echo "header: hev2.h alone compiles (C99, C++) and links"

test-capi-cli: capi $(BUILD)/hev2-demo-listeners ## hev2-connect's options, output and exit codes (tests/c/test_cli.sh)
	tests/c/test_cli.sh $(BUILD)/hev2-connect

# make install into a scratch prefix, then build a program with pkg-config
# against the installed copy and run it.
test-capi-install: capi ## make install into a scratch prefix, build and run a program with pkg-config
	@set -e; d=$$(mktemp -d); trap 'rm -rf $$d' EXIT; \
	$(MAKE) --no-print-directory install PREFIX=$$d >/dev/null; \
	test -L $$d/lib/libhev2.so && test -L $$d/lib/libhev2.so.$(CAPI_SOVERSION) && test -f $$d/lib/libhev2.so.$(CAPI_VERSION); \
	PKG_CONFIG_PATH=$$d/lib/pkgconfig pkg-config --modversion hev2 | grep -qx $(CAPI_VERSION); \
	$(CC) -std=c99 -Wall -Werror -o $$d/probe tests/c/header_only.c $$(PKG_CONFIG_PATH=$$d/lib/pkgconfig pkg-config --cflags --libs hev2) -Wl,-rpath,$$d/lib; \
	$$d/probe; $$d/bin/hev2-connect --help >/dev/null; \
	echo "install: PREFIX layout, pkg-config and an installed build work"

# The shared scenario suite (real namespaces, DNS server, impaired links)
# with hev2-connect --json as the client: the system resolver, the built-in
# one reading the namespace's resolv.conf, and the built-in one given the
# test DNS server by --nameserver (its IPv6 address); then the system and the
# built-in resolver with the race driven by the waiting thread. Every run
# also has each row's race written as SVG, qlog and Chrome trace
# (--svg/--qlog/--chrome-trace, into $(BUILD)/traces/<run>/<row>.*) and
# checks them: valid, and the race the JSON line reports. The HTTPS rows run
# in every one (--require: hev2-connect has --https-rr and --ech). Root only.
test-capi-scenarios: capi testbed-tools ## the scenario suite with hev2-connect --json as client (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-capi-scenarios needs root (network namespaces)"; exit 0; fi; \
	set -e; \
	$(TESTBED_SUITE) --require https-rr,ech --trace-files $(BUILD)/traces/c --client "$(CURDIR)/$(BUILD)/hev2-connect --json"; \
	$(TESTBED_SUITE) --require https-rr,ech --trace-files $(BUILD)/traces/c-waiter --client "$(CURDIR)/$(BUILD)/hev2-connect --json --drive waiter"; \
	$(TESTBED_SUITE) --require https-rr,ech --trace-files $(BUILD)/traces/c-waiter-builtin --client "$(CURDIR)/$(BUILD)/hev2-connect --json --drive waiter --resolver builtin"; \
	$(TESTBED_SUITE) --require https-rr,ech --trace-files $(BUILD)/traces/c-builtin --client "$(CURDIR)/$(BUILD)/hev2-connect --json --resolver builtin"; \
	$(TESTBED_SUITE) --require https-rr,ech --trace-files $(BUILD)/traces/c-nameserver --client "$(CURDIR)/$(BUILD)/hev2-connect --json --resolver builtin --nameserver [2001:db8::53]:53"

SCENARIO_CLIENTS += --client "hev2-c=$(CURDIR)/$(BUILD)/hev2-connect --json"

# hev2-connect --stdio on the test bed (tests/connectbed, Go tests
# that drive the tool): a few MB both ways through the race with checksums,
# half-close each way, exit 1 naming the host when every address fails,
# exit 3 on a reset, and ssh -o ProxyCommand='hev2-connect --stdio %h %p'
# (then git clone over ssh) against Debian's sshd in the server namespace.
test-capi-stdio: capi ## hev2-connect --stdio on the test bed: relay both ways, exit codes, ssh ProxyCommand and git over ssh against sshd (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-capi-stdio needs root (network namespaces)"; exit 0; fi; \
	HEV2_CONNECT=$(CURDIR)/$(BUILD)/hev2-connect $(GO) test -count=1 -v ./tests/connectbed/

# ---- bench-capi -----------------------------------------------------------------
# The C benchmarks (bench/c) share the C tests' helpers (tests/c/util.c) and
# print their rows with bench/c/row.c.
CAPI_BENCH_BINS := $(BUILD)/bench/c/bench_connect $(BUILD)/bench/c/bench_dlopen $(BUILD)/bench/c/bench_pending
CAPI_BENCH_ROW  := bench/c/row.c bench/c/row.h

$(BUILD)/bench/c/%: bench/c/%.c $(CAPI_TEST_DEPS) $(CAPI_BENCH_ROW) $(CAPI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Itests/c -Ibench/c -o $@ $< bench/c/row.c tests/c/util.c tests/c/util_lib.c -L$(BUILD) -lhev2 -Wl,-rpath,$(CURDIR)/$(BUILD) $(CAPI_TEST_LIBS)

# bench_dlopen and bench_startup load the library themselves: they must
# not link against it.
$(BUILD)/bench/c/bench_dlopen: bench/c/bench_dlopen.c $(CAPI_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c $(CAPI_TEST_LIBS)

$(BUILD)/bench/c/bench_startup: bench/c/bench_startup.c $(CAPI_BENCH_ROW) include/hev2.h
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Ibench/c -o $@ $< bench/c/row.c

# The floor of bench_startup: an empty Go c-shared library, built as
# libhev2 is (CAPI_SHARED_FLAGS).
CAPI_BENCH_EMPTY := $(BUILD)/bench/libhev2bench-empty.so
$(CAPI_BENCH_EMPTY): bench/emptylib/main.go bench/emptylib/empty.map
	@mkdir -p $(dir $@)
	$(GO) build $(call CAPI_SHARED_FLAGS,libhev2bench-empty.so,$(CURDIR)/bench/emptylib/empty.map) -o $@ ./bench/emptylib
	@rm -f $(BUILD)/bench/libhev2bench-empty.h

bench-capi: capi $(CAPI_BENCH_BINS) ## plain C vs libhev2 connects, interleaved, syscalls per connect; then bench-capi-startup
	$(FRESH_NETNS) bench/c/bench_capi.sh $(BUILD)
	@$(MAKE) --no-print-directory bench-capi-startup

# BENCH_STARTUP_ROUNDS: fresh-process rounds (five processes each).
BENCH_STARTUP_ROUNDS ?= 30
bench-capi-startup: capi-lib $(BUILD)/bench/c/bench_startup $(CAPI_BENCH_EMPTY) ## fresh processes: hev2_init vs an empty Go c-shared library's first call (goal <= 1 ms), the first connect and RSS vs plain C
	$(FRESH_NETNS) $(BUILD)/bench/c/bench_startup $(CAPI_BENCH_EMPTY) $(abspath $(BUILD))/libhev2.so $(BENCH_STARTUP_ROUNDS)

# ---- soak (not part of make test) ------------------------------------------------
.PHONY: soak
$(BUILD)/tests/c/soak: tests/c/soak.c $(CAPI_TEST_DEPS) $(CAPI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c tests/c/util_lib.c -L$(BUILD) -lhev2 -Wl,-rpath,$(CURDIR)/$(BUILD) $(CAPI_TEST_LIBS)

SOAK_N ?= 500000
SOAK_BINDING_N ?= 100000
soak: capi-lib $(BUILD)/tests/c/soak ruby-ext ## SOAK_N (500,000) connects through the C ABI, SOAK_BINDING_N (100,000) through Python and each Ruby; RSS, fds, threads, handles stay flat
	$(BUILD)/tests/c/soak $(SOAK_N)
	$(PYTHON_ENV) $(PYTHON_DEB) bindings/python/bench/soak.py $(SOAK_BINDING_N)
	$(RUBY_EACH) \
		$(RUBY_ENV) RUBYLIB=$(RUBY_EXT_DIR)/$$v $$r -I$(RUBY_DIR)/lib $(RUBY_DIR)/bench/soak.rb $(SOAK_BINDING_N); \
	done
