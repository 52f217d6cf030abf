# dist-deb: hev2's Debian packages (packaging/debian, debhelper), for amd64
# and arm64 (cross-built): the source package (hev2_VERSION.orig.tar.xz with
# the Go modules vendored, the debian tarball, the .dsc) and libhev2-1,
# libhev2-dev, hev2-tools per architecture, into $(DIST_DIR), then lintian
# on all of them (an error or a warning without a justified override fails).
# packaging/build-deb.sh stages the tree and runs dpkg-source and
# dpkg-buildpackage; tests/dist/deb/ installs and uses the packages.
DEB_WORK := $(BUILD)/deb

DIST_TARGETS      += dist-deb
DIST_TEST_TARGETS += test-dist-deb
# dpkg-dev, debhelper, fakeroot: the package build; scdoc: the manual page;
# lintian; libc6:arm64 (multiarch): dpkg-shlibdeps reads its symbols file
# for the arm64 packages' libc6 dependency, and test-dist-deb's scratch
# dpkg database copies its entry; man-db: test-dist-deb reads the manual page.
DEB_PACKAGES += dpkg-dev debhelper fakeroot scdoc lintian xz-utils git man-db pkg-config libc6:arm64

.PHONY: dist-deb test-dist-deb

dist-deb: ## Debian source package and libhev2-1, libhev2-dev, hev2-tools for $(DIST_ARCHES) into $(DIST_DIR)/, lintian-clean
	GO=$(GO) packaging/build-deb.sh $(CAPI_VERSION) $(DEB_WORK) $(DIST_DIR) $(DIST_ARCHES)
	@# Every tag is shown, overridden ones with their reason; an error or a
	@# warning that no override covers fails (lintian's own --fail-on would
	@# also count the overridden ones once they are shown).
	@start=$$(date +%s); out=$$(lintian --fail-on none --display-info --show-overrides $(DEB_WORK)/*.dsc $(DEB_WORK)/*/*.changes) || \
	  { echo "$$out"; echo "dist-deb: lintian itself failed"; exit 1; }; \
	echo "$$out"; \
	if echo "$$out" | grep -q '^[EW]: '; then echo "dist-deb: lintian reports errors or warnings (E:, W: above)"; exit 1; fi; \
	echo "dist-deb: lintian: no error, no warning ($$(echo "$$out" | grep -c '^O: ') overridden with a reason, $$(echo "$$out" | grep -c '^I: ') info) in $$(($$(date +%s) - start)) s"

test-dist-deb: ## the .debs installed with dpkg into a scratch root: a pkg-config build that connects, hev2-connect --version, the man page; arm64's under qemu
	ARM64_CC=$(ARM64_CC) ARM64_SYSROOT=$(ARM64_SYSROOT) ARM64_QEMU=$(ARM64_QEMU) tests/dist/deb/test_deb.sh $(CAPI_VERSION) $(DIST_DIR)
