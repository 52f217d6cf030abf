# frozen_string_literal: true

# Builds hev2_ext.so against the libhev2 that pkg-config names: an installed
# libhev2-dev, or a source tree's build through
# PKG_CONFIG_PATH=<tree>/build (which holds hev2-uninstalled.pc). Nothing
# here knows where either lives.
#
#   ruby extconf.rb && make
require "mkmf"

# One line on stderr, and out: exit! skips mkmf's own exit handler, which
# would add a screenful about configuration options to a problem that has
# one cause.
def give_up(line)
  $stderr.puts "hev2_ext: #{line}"
  exit!(1)
end

pkg_config_command = RbConfig::CONFIG["PKG_CONFIG"].to_s
pkg_config_command = "pkg-config" if pkg_config_command.empty?
unless find_executable(pkg_config_command)
  give_up "pkg-config is not installed (Debian: apt-get install pkg-config); it is how libhev2 is found"
end
unless pkg_config("hev2")
  give_up "pkg-config knows no hev2: install libhev2-dev, or point PKG_CONFIG_PATH at a built hev2 tree's " \
          "build/ directory (make capi there)"
end
unless have_header("hev2.h") && have_func("hev2_connect", "hev2.h")
  give_up "hev2.h or libhev2 named by pkg-config cannot be used to build (see mkmf.log)"
end

# The library is found at run time where pkg-config found it at build time
# (its libdir), so an extension built against a tree's build/ runs without
# LD_LIBRARY_PATH; for a libdir the loader searches anyway it changes nothing.
libdir = pkg_config("hev2", "variable=libdir")
$LDFLAGS << " -Wl,-rpath,#{libdir}" if libdir && !libdir.empty?

# Ruby 3.3+ has the preregistered postponed jobs; 3.1 only register_one
# (completion.c explains the difference).
have_func("rb_postponed_job_preregister", "ruby/debug.h")

# Ruby's own headers as system headers (3.1's trip -Wextra themselves);
# -Werror only where asked (the tree's test build).
$INCFLAGS = $INCFLAGS.gsub(/-I(\$\((?:arch_hdrdir|hdrdir)\)\S*)/, '-isystem \1')
$CFLAGS << " -Wall -Wextra"
$CFLAGS << " -Werror" if ENV["HEV2_WERROR"] == "1"

create_makefile("hev2_ext")
