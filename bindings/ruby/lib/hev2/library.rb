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
        # vendored into the gem by `make package-ruby`
        File.expand_path("native/#{SONAME}", __dir__),
        # the repository's build output, when running from a checkout
        File.expand_path("../../../../build/#{SONAME}", __dir__),
        # the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache)
        SONAME,
      ]
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
          tried << "#{path} (#{e.message})"
        end
      end
      raise LibraryError, "hev2: cannot load #{SONAME}; tried:\n  " + tried.join("\n  ") +
        "\nBuild it with `make build` or point #{ENV_VAR} at it."
    end
  end
end
