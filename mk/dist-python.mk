# dist-python: the Python package as a package index takes it (the frame is
# mk/dist.mk): an sdist whose setup.py builds libhev2.so with Go at install
# (bindings/python/setup.py), and built from that sdist one
# hev2-VERSION-py3-none-manylinux_2_N_ARCH.whl per architecture with that
# architecture's library inside: the package is ctypes over the library,
# so one wheel serves every Python 3 of its platform. N is the newest glibc
# symbol version the library needs, read by scripts/manylinux-tag.py (which
# also refuses a library needing anything outside manylinux's allow-list).
# Built offline with Debian's setuptools, wheel and pip, no build isolation.
# (This file is read before mk/dist.mk and mk/python.mk, whose variables it
# uses: its own are therefore expanded when used, `=`, and no target or
# prerequisite names one.)

PYDIST_BUILD  = $(BUILD)/python-dist
# The sdist's tree: the package, setup.py, the license, and the Go module
# sources the library is built from (no tests, test data or benchmarks),
# with the modules vendored.
PYDIST_TREE   = $(PYDIST_BUILD)/hev2-$(CAPI_VERSION)
PYDIST_GO     = capi core internal include
PYDIST_SDIST  = $(DIST_DIR)/hev2-$(CAPI_VERSION).tar.gz
MANYLINUX_TAG = $(PYTHON_DEB) scripts/manylinux-tag.py
PIP_QUIET     = -q --disable-pip-version-check --no-index

# The arm64 Python the aarch64 wheel is used from under qemu: Debian's own,
# of the host's Python version, unpacked into a root of its own
# (scripts/arm64-python-sysroot.sh), with the libraries its binary and
# ctypes need. libffi8:arm64 in DEB_PACKAGES makes dpkg know arm64 and apt
# fetch its package lists (scripts/install-deps.sh), which apt-get download
# needs; nothing else arm64 is installed on the host.
ARM64_PY_ROOT     = $(ARM64_BUILD)/python-sysroot
ARM64_PY_VERSION  = $(shell $(PYTHON_DEB) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
ARM64_PY_LIBS     = libffi8 libexpat1 zlib1g

DIST_TARGETS      += dist-python
DIST_TEST_TARGETS += test-dist-python
# python3-venv: the test's fresh virtual environments; python3-wheel-whl:
# the wheel package as a .whl in /usr/share/python-wheels, beside pip's and
# setuptools', so that pip installs the sdist with build isolation offline.
DEB_PACKAGES += python3-pip python3-setuptools python3-wheel python3-venv python3-wheel-whl libffi8:arm64

.PHONY: dist-python test-dist-python arm64-python-sysroot

dist-python: capi-lib capi-lib-arm64 ## the sdist and the manylinux wheels (x86_64, aarch64) into $(DIST_DIR)/, offline
	rm -rf $(PYDIST_BUILD) $(DIST_DIR)/hev2-*.whl $(PYDIST_SDIST)
	mkdir -p $(PYDIST_TREE) $(DIST_DIR)
	cp $(addprefix $(PYTHON_DIR)/,pyproject.toml README.md setup.py MANIFEST.in) LICENSE go.mod go.sum $(PYDIST_TREE)/
	tar -cf - --exclude=__pycache__ -C $(PYTHON_DIR) src | tar -xf - -C $(PYDIST_TREE)
	tar -cf - --exclude='*_test.go' --exclude=testdata $(PYDIST_GO) | tar -xf - -C $(PYDIST_TREE)
	@# The modules from the cache `make deps` filled (no network): the sdist builds offline.
	cd $(PYDIST_TREE) && GOFLAGS=-mod=mod GOPROXY=off $(GO) mod vendor
	@# setuptools' own sdist hook (PEP 517), as a build frontend calls it.
	cd $(PYDIST_TREE) && $(PYTHON_DEB) -c 'import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])' \
		$(abspath $(DIST_DIR)) >$(abspath $(PYDIST_BUILD))/sdist.log 2>&1 || { cat $(PYDIST_BUILD)/sdist.log; exit 1; }
	@test -f $(PYDIST_SDIST) || { cat $(PYDIST_BUILD)/sdist.log; echo "dist-python: setuptools made no $(PYDIST_SDIST)"; exit 1; }
	@set -e; for lib in $(CAPI_LIB) $(ARM64_LIB); do \
		tag=$$($(MANYLINUX_TAG) -v $$lib); \
		HEV2_WHEEL_LIBRARY=$(abspath $$lib) $(PYTHON_DEB) -m pip wheel $(PIP_QUIET) --no-deps --no-build-isolation --no-cache-dir \
			-w $(DIST_DIR) --config-settings=--build-option=--plat-name=$$tag $(PYDIST_SDIST); \
	done
	@ls -l $(DIST_DIR)/hev2-*

# Each artifact installed and used as its users would, with HEV2_LIBRARY
# unset and no checkout on any path (bindings/python/dist_tests/): the
# metadata and the tags checked against the libraries; the x86_64 wheel in
# a fresh venv, then a connect and `python -m hev2`; the sdist in another
# with Go on PATH (vendored modules, no module cache) and without Go (the
# one-line error); the aarch64 wheel installed for aarch64 and used by
# Debian's arm64 Python under $(ARM64_QEMU).
test-dist-python: arm64-python-sysroot ## the wheels and the sdist installed in fresh venvs and used (the aarch64 wheel under qemu)
	@test -f $(PYDIST_SDIST) || { echo "test-dist-python: no $(PYDIST_SDIST): run make dist-python (or make dist) first"; exit 1; }
	cd / && env -u HEV2_LIBRARY -u PYTHONPATH -u GOFLAGS -u VIRTUAL_ENV \
		DIST=$(abspath $(DIST_DIR)) VERSION=$(CAPI_VERSION) CHECKOUT=$(CURDIR) PYTHON=$(PYTHON_DEB) \
		GO=$$(command -v $(GO)) QEMU=$(ARM64_QEMU) ARM64_ROOT=$(abspath $(ARM64_PY_ROOT)) ARM64_PYTHON=python$(ARM64_PY_VERSION) \
		$(CURDIR)/$(PYTHON_DIR)/dist_tests/test-dist-python.sh

# Made once (about 10 s, a few MB fetched), again when the script changes.
arm64-python-sysroot: ## Debian's arm64 Python unpacked into $(ARM64_BUILD)/python-sysroot, for qemu -L (apt-get download, no install)
	@if [ ! -e $(ARM64_PY_ROOT)/.done ] || [ scripts/arm64-python-sysroot.sh -nt $(ARM64_PY_ROOT)/.done ]; then \
		scripts/arm64-python-sysroot.sh $(ARM64_PY_ROOT) $(ARM64_SYSROOT) $(ARM64_PY_VERSION) $(ARM64_PY_LIBS) && \
		touch $(ARM64_PY_ROOT)/.done; \
	fi
