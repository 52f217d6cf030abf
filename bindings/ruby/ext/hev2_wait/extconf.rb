# frozen_string_literal: true

# Builds hev2/hev2_wait.so (Hev2::NoGVL): hev2_wait without the GVL, with an
# unblocking function (see hev2_wait.c). It does not link against libhev2:
# the gem passes the addresses of the functions of the library it loaded.
# Without a C compiler the gem works without it (see README.md).
require "mkmf"

# No compiler (or no Ruby headers): a Makefile that builds nothing, so that
# `gem install` still succeeds and the gem runs without the extension.
buildable = begin
  have_header("ruby/thread.h") && have_func("rb_thread_call_without_gvl", "ruby/thread.h")
rescue RuntimeError # mkmf: "The compiler failed to generate an executable file."
  false
end
unless buildable
  warn "hev2: the C extension cannot be built here (see mkmf.log); " \
       "Hev2.tcp will wait on the handle's eventfd instead"
  File.write("Makefile", dummy_makefile($srcdir).join)
  exit 0
end

# The project's warning level; -Werror only where asked (the in-tree build,
# `make ruby-ext`): a user's newer compiler must not fail a gem install.
# Ruby's own headers are included as system headers: some Rubies' (3.1)
# trip -Wextra themselves.
$INCFLAGS = $INCFLAGS.gsub(/-I(\$\((?:arch_hdrdir|hdrdir)\)\S*)/, '-isystem \1')
$CFLAGS << " -Wall -Wextra"
$CFLAGS << " -Werror" if ENV["HEV2_WERROR"] == "1"

create_makefile("hev2/hev2_wait")
