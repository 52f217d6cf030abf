# dist-ruby: the gems of `make dist` (scripts/dist-ruby-gems.sh), one
# gemspec (bindings/ruby/hev2.gemspec) with the platform as its parameter:
#   hev2-VERSION-x86_64-linux.gem, hev2-VERSION-aarch64-linux.gem
#       libhev2.so of that architecture inside, the C extension's source
#   hev2-VERSION.gem (platform ruby)
#       the library's Go module with its dependencies vendored, built at
#       install when Go is present (ext/libhev2/extconf.rb); vendored so
#       that the install needs no network and no module cache
# test-dist-ruby installs each into a scratch GEM_HOME on every Ruby of
# RUBIES and uses it (scripts/test-dist-ruby.sh).
DIST_RUBY_STAGE := $(BUILD)/dist-ruby
# The gem command that builds the gems (Debian's; any Ruby's builds the same).
DIST_RUBY_GEM   := /usr/bin/gem

DIST_TARGETS      += dist-ruby
DIST_TEST_TARGETS += test-dist-ruby
# ruby-dev and gcc: the C extension compiled at install; readelf (binutils)
# reads the libraries' headers and SONAMEs.
DEB_PACKAGES      += ruby ruby-dev gcc libc6-dev binutils

.PHONY: dist-ruby test-dist-ruby

dist-ruby: capi-lib capi-lib-arm64 ## the gems: hev2-VERSION-{x86_64,aarch64}-linux.gem (library inside) and hev2-VERSION.gem (builds it with Go) into $(DIST_DIR)/
	GO=$(GO) GEM=$(DIST_RUBY_GEM) scripts/dist-ruby-gems.sh $(DIST_DIR) $(DIST_RUBY_STAGE) $(CAPI_LIB) $(ARM64_LIB)

# After dist-ruby (make test-dist builds them first): uses the gems of
# $(DIST_DIR), fails when one is missing.
test-dist-ruby: rubies ## each gem installed into a scratch GEM_HOME on each Ruby of RUBIES from /, then Hev2.tcp and hev2/replace; the source gem with Go and without; the aarch64 gem's library and platform
	GO=$(GO) scripts/test-dist-ruby.sh $(DIST_DIR) $(CAPI_VERSION) $(RUBIES)
