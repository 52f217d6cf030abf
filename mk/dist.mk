# dist: the artifacts a package index and a distribution accept, for amd64
# and arm64, from the one version of include/hev2.h, built offline (Debian's
# packages, the Go module proxy) into $(DIST_DIR) with a SHA256SUMS.
# Each kind of artifact has its own mk/dist-<kind>.mk that appends its
# build target to DIST_TARGETS and its install test to DIST_TEST_TARGETS.
#
# arm64 is cross-compiled (Debian's gcc-aarch64-linux-gnu with
# CGO_ENABLED=1 GOARCH=arm64) and run under qemu-aarch64-static with the
# cross toolchain's sysroot.

DIST_DIR          := $(BUILD)/dist
DIST_ARCHES       := amd64 arm64
ARM64_CC          := aarch64-linux-gnu-gcc
ARM64_SYSROOT     := /usr/aarch64-linux-gnu
ARM64_QEMU        := qemu-aarch64-static
ARM64_BUILD       := $(BUILD)/arm64
ARM64_LIB         := $(ARM64_BUILD)/libhev2.so.$(CAPI_VERSION)

DEB_PACKAGES      += gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static binutils-aarch64-linux-gnu

# DIST_TARGETS and DIST_TEST_TARGETS start empty in the Makefile: the
# mk/dist-<kind>.mk files sort before this one ('-' < '.') and append first.
TEST_TARGETS      += test-dist

.PHONY: dist test-dist capi-lib-arm64

# The same library as capi-lib, for arm64 (the rule mirrors capi-lib's
# flags: SONAME, version script, -trimpath, stripped).
capi-lib-arm64: ## libhev2.so for arm64 (cross-compiled with gcc-aarch64-linux-gnu) into $(ARM64_BUILD)/
	@mkdir -p $(ARM64_BUILD)
	GOARCH=arm64 CC=$(ARM64_CC) $(GO) build -buildmode=c-shared -trimpath \
	  -ldflags "-s -extldflags \"-Wl,-soname,libhev2.so.$(CAPI_SOVERSION) -Wl,--version-script=$(CURDIR)/capi/hev2.map\"" \
	  -o $(ARM64_BUILD)/.libhev2.new ./capi
	@rm -f $(ARM64_BUILD)/.libhev2.h $(ARM64_BUILD)/.libhev2.new.h
	@if cmp -s $(ARM64_BUILD)/.libhev2.new $(ARM64_LIB); then rm -f $(ARM64_BUILD)/.libhev2.new; else mv $(ARM64_BUILD)/.libhev2.new $(ARM64_LIB); fi
	@ln -sf libhev2.so.$(CAPI_VERSION) $(ARM64_BUILD)/libhev2.so.$(CAPI_SOVERSION)
	@ln -sf libhev2.so.$(CAPI_SOVERSION) $(ARM64_BUILD)/libhev2.so

# Every artifact, then their checksums (the DIST_TARGETS of mk/dist-*.mk).
# CHANGELOG.md must have an entry for the version built.
dist: deps ## every artifact (wheel, sdist, gems, .deb files; amd64 and arm64) into $(DIST_DIR)/ with SHA256SUMS
	@grep -q '^## $(subst .,\.,$(CAPI_VERSION)) ' CHANGELOG.md || { echo "dist: CHANGELOG.md has no '## $(CAPI_VERSION) ' entry"; exit 1; }
	@rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	@set -e; for t in $(DIST_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done
	cd $(DIST_DIR) && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort | xargs -r sha256sum > SHA256SUMS
	@cat $(DIST_DIR)/SHA256SUMS

# Each artifact installed and used as its users would (DIST_TEST_TARGETS).
test-dist: ## make dist, then every artifact installed and used the way its users would, HEV2_LIBRARY unset, no checkout on any path
	$(MAKE) --no-print-directory dist
	@set -e; for t in $(DIST_TEST_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done
