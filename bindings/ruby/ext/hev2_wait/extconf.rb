# frozen_string_literal: true

# Builds hev2/hev2_wait.so (Hev2::NoGVL): hev2_wait without the GVL, with an
# unblocking function (see hev2_wait.c). It does not link against libhev2:
# the gem passes the addresses of the functions of the library it loaded.
# Without a C compiler the gem works without it (see README.md).
require "mkmf"

have_header("ruby/thread.h") or abort "hev2: ruby/thread.h missing (Ruby headers too old)"
have_func("rb_thread_call_without_gvl", "ruby/thread.h") or
  abort "hev2: rb_thread_call_without_gvl missing"

# The project's warning level; -Werror only where asked (the in-tree build,
# `make ruby-ext`): a user's newer compiler must not fail a gem install.
# Ruby's own headers are included as system headers: some Rubies' (3.1)
# trip -Wextra themselves.
$INCFLAGS = $INCFLAGS.gsub(/-I(\$\((?:arch_hdrdir|hdrdir)\)\S*)/, '-isystem \1')
$CFLAGS << " -Wall -Wextra"
$CFLAGS << " -Werror" if ENV["HEV2_WERROR"] == "1"

create_makefile("hev2/hev2_wait")
