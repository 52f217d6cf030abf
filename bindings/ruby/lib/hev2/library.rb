# frozen_string_literal: true

require "fiddle"

module Hev2
  # Raised when libhev2.so cannot be found or is not the one this gem was
  # written for. It is a ::LoadError so that `rescue LoadError` around an
  # optional `require "hev2"` keeps working.
  class LibraryError < ::LoadError; end

  # Finds and opens libhev2.so. Fiddle is used (not ruby-ffi) because it ships
  # with every Ruby, so the gem has no dependency to install, and because a
  # Fiddle::Function releases the GVL around each call unless told otherwise.
  module Library
    ENV_VAR = "HEV2_LIBRARY"
    SONAME = "libhev2.so"

    module_function

    # The places tried, in order. An explicit HEV2_LIBRARY is the only place
    # tried: a user who names a file wants that file or an error, not a
    # silent fallback to another copy.
    def candidates
      explicit = ENV[ENV_VAR]
      return [explicit] if explicit && !explicit.empty?

      [
        # inside the gem: a platform gem carries it; the source gem builds it
        # at install and RubyGems copies it here (install_extension_in_lib)
        File.expand_path("native/#{SONAME}", __dir__),
        # the source gem's build in the gem's extension directory (where it
        # stays when RubyGems does not copy extensions into lib/)
        *built_at_install,
        # the repository's build output, when running from a checkout
        File.expand_path("../../../../build/#{SONAME}", __dir__),
        # the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache)
        SONAME,
      ]
    end

    # The library ext/libhev2 of the source gem built, in the extension
    # directory of the installed gem this file belongs to (none when this
    # file is not an installed gem's, e.g. in a checkout).
    def built_at_install
      spec = defined?(Gem) && Gem.loaded_specs["hev2"]
      return [] unless spec && __dir__.start_with?(File.join(spec.full_gem_path, ""))

      [File.join(spec.extension_dir, "hev2/native", SONAME)]
    end

    # ELF e_machine numbers by name, for the message below.
    MACHINES = { 3 => "i386", 40 => "arm", 62 => "x86_64", 183 => "aarch64", 243 => "riscv64" }.freeze

    # The dynamic linker reports a library of another architecture (a gem
    # of another platform, installed by naming its file) as "No such file":
    # say what it is instead. Empty when both are the same or unreadable.
    def other_machine(path)
      theirs, ours = [path, "/proc/self/exe"].map { |f| elf_machine(f) }
      return "" if theirs.nil? || ours.nil? || theirs == ours

      "; it is a library for #{MACHINES.fetch(theirs, "ELF machine #{theirs}")}, " \
        "this Ruby runs on #{MACHINES.fetch(ours, "ELF machine #{ours}")}"
    end

    def elf_machine(file)
      header = File.binread(file, 20)
      return nil unless header&.bytesize == 20 && header.start_with?("\x7FELF".b)

      header.unpack1(header.getbyte(5) == 2 ? "@18n" : "@18v") # EI_DATA: 2 is big-endian
    rescue SystemCallError
      nil
    end

    def open
      tried = []
      candidates.each do |path|
        if path.include?("/") && !File.exist?(path)
          tried << "#{path} (no such file)"
          next
        end
        begin
          return [Fiddle::Handle.new(path, Fiddle::RTLD_NOW | Fiddle::RTLD_GLOBAL), path]
        rescue Fiddle::DLError => e
          tried << "#{path} (#{e.message}#{other_machine(path)})"
        end
      end
      raise LibraryError, "hev2: cannot load #{SONAME}; tried:\n  " + tried.join("\n  ") +
        "\nBuild it with `make build` or point #{ENV_VAR} at it."
    end
  end
end
