# capi: libhev2.so (the C ABI of include/hev2.h), its pkg-config file, the
# hev2-connect tool, the C test suite and the C ABI benchmark.
CAPI_SOVERSION := 1
CAPI_VERSION   := 1.0.0
CAPI_LIB       := $(BUILD)/libhev2.so.$(CAPI_VERSION)
CAPI_CFLAGS    := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude
CAPI_LDFLAGS   := -L$(BUILD) -lhev2 -Wl,-rpath,'$$ORIGIN'
PREFIX         ?= /usr/local

BUILD_TARGETS += capi
TEST_TARGETS  += test-capi
BENCH_TARGETS += bench-capi
DEB_PACKAGES  += gcc libc6-dev make strace valgrind iproute2 binutils pkg-config

.PHONY: capi capi-lib install test-capi bench-capi demo-capi

capi: capi-lib $(BUILD)/hev2-connect $(BUILD)/hev2.pc

# go build decides itself whether anything changed (its cache makes a no-op
# build fast); the library file is only replaced when the output differs, so
# what links against it is not rebuilt for nothing.
capi-lib:
	@mkdir -p $(BUILD)
	$(GO) build -buildmode=c-shared -trimpath \
	  -ldflags "-s -extldflags \"-Wl,-soname,libhev2.so.$(CAPI_SOVERSION) -Wl,--version-script=$(CURDIR)/capi/hev2.map\"" \
	  -o $(BUILD)/.libhev2.new ./capi
	@rm -f $(BUILD)/.libhev2.h $(BUILD)/.libhev2.new.h
	@if cmp -s $(BUILD)/.libhev2.new $(CAPI_LIB); then rm -f $(BUILD)/.libhev2.new; else mv $(BUILD)/.libhev2.new $(CAPI_LIB); fi
	@ln -sf libhev2.so.$(CAPI_VERSION) $(BUILD)/libhev2.so.$(CAPI_SOVERSION)
	@ln -sf libhev2.so.$(CAPI_SOVERSION) $(BUILD)/libhev2.so

$(CAPI_LIB): capi-lib

$(BUILD)/hev2-connect: examples/hev2-connect.c include/hev2.h $(CAPI_LIB)
	$(CC) $(CAPI_CFLAGS) -o $@ $< $(CAPI_LDFLAGS)

$(BUILD)/hev2.pc: hev2.pc.in
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(CAPI_VERSION)|g' $< > $@

# make install PREFIX=/opt/hev2 [DESTDIR=/tmp/stage]
install: capi
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(CAPI_LIB) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libhev2.so.$(CAPI_VERSION) $(DESTDIR)$(PREFIX)/lib/libhev2.so.$(CAPI_SOVERSION)
	ln -sf libhev2.so.$(CAPI_SOVERSION) $(DESTDIR)$(PREFIX)/lib/libhev2.so
	install -m 0644 include/hev2.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(CAPI_VERSION)|g' hev2.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hev2.pc
	$(CC) $(CAPI_CFLAGS) -o $(DESTDIR)$(PREFIX)/bin/hev2-connect examples/hev2-connect.c -L$(BUILD) -lhev2 -Wl,-rpath,$(PREFIX)/lib

# Small C programs of examples/c (each one file, linked with libhev2 when it
# uses it).
$(BUILD)/hev2-demo-listeners: examples/c/hev2-demo-listeners.c
	@mkdir -p $(BUILD)
	$(CC) $(CAPI_CFLAGS) -o $@ $<

# demo-capi: the fallback timeline on loopback (make demo runs it).
demo-capi: capi $(BUILD)/hev2-demo-listeners
	@examples/c/demo.sh $(BUILD)

# ---- the C test suite (tests/c) ---------------------------------------------
CAPI_TESTS     := test_api test_badinput test_storm test_fork test_sigchld test_jobs
CAPI_TEST_BINS := $(addprefix $(BUILD)/tests/c/,$(CAPI_TESTS))
CAPI_TEST_LIBS := -lpthread -ldl

CAPI_TEST_DEPS := tests/c/util.c tests/c/util_lib.c tests/c/util.h tests/c/check.h include/hev2.h

$(BUILD)/tests/c/%: tests/c/%.c $(CAPI_TEST_DEPS) $(CAPI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c tests/c/util_lib.c -L$(BUILD) -lhev2 -Wl,-rpath,$(CURDIR)/$(BUILD) $(CAPI_TEST_LIBS)

# test_sigchld loads the library itself (dlopen, after installing its
# handlers), so it must not link against it.
$(BUILD)/tests/c/test_sigchld: tests/c/test_sigchld.c $(CAPI_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CAPI_CFLAGS) -Itests/c -o $@ $< tests/c/util.c $(CAPI_TEST_LIBS)
