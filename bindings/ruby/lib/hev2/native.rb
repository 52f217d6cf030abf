# frozen_string_literal: true

require "fiddle"
require_relative "library"
require_relative "abi"
require_relative "layout"

module Hev2
  # The C ABI of include/hev2.h, bound with Fiddle.
  #
  # Every function is bound without `need_gvl`, so Fiddle releases the GVL
  # around each call: no call into the library ever holds it, including the
  # first one, which waits for the Go runtime to start. Pointer arguments are
  # declared uintptr_t and given as Integer addresses of scratch buffers (see
  # Scratch): Fiddle then allocates no Ruby object per call.
  module Native
    # Every constant of the header (OK, EINVAL ..., RESOLVER_*, TIMEOUT_*,
    # EV_*, the buffer sizes and limits), generated into abi.rb.
    include ABI

    # The header version this gem was generated from (HEV2_VERSION_NUM): the
    # library must be of its major version and not older.
    WRITTEN_FOR = ABI::VERSION_NUM

    # hev2_result_info.timeout -> the option that fired (nil for none).
    TIMEOUT_KINDS = ABI::TIMEOUT_NAMES.each_with_object([]) do |(kind, name), kinds|
      kinds[kind] = kind == ABI::TIMEOUT_NONE ? nil : name.to_sym
    end.freeze

    # hev2_lookup_info.state -> a Symbol.
    LOOKUP_STATES = ABI::LOOKUP_STATE_NAMES.each_with_object([]) do |(state, name), states|
      states[state] = name.to_sym
    end.freeze

    U = Fiddle::TYPE_UINTPTR_T # pointers and the 64-bit handle id
    I = Fiddle::TYPE_INT
    SIGNATURES = {
      hev2_version: [[], I],
      hev2_strerror: [[I], U],
      hev2_init: [[], I],
      hev2_set_max_handles: [[I], I],
      hev2_stats: [[U], I],
      hev2_options_init: [[U], I],
      hev2_options_init_size: [[U, Fiddle::TYPE_SIZE_T], I],
      hev2_connect_len: [[U, Fiddle::TYPE_SIZE_T, U, U, U], I],
      hev2_wait: [[U, I], I],
      hev2_connect_wait: [[U, U, U, I, U, U], I], # 1.2 (its address, for Hev2::NoGVL.connect)
      hev2_fd: [[U], I],
      hev2_cancel: [[U], I],
      hev2_result: [[U, U], I],
      hev2_get_attempt: [[U, I, U], I],
      hev2_get_event: [[U, I, U], I],
      hev2_event_name: [[I], U],
      hev2_errmsg: [[U], U],
      hev2_release: [[U], I],
      hev2_last_error: [[], U],
      hev2_last_errno: [[], I],
      hev2_write_trace: [[U, I, I, U], I], # 1.3
      # 1.3: the establishment report (Hev2.tcp(..., report: true))
      hev2_report: [[U, U], I],
      hev2_report_lookup: [[U, I, U], I],
      hev2_report_attempt: [[U, I, U], I],
      hev2_set_history: [[I], I],
      hev2_clear_history: [[], I],
      # 1.5: what the HTTPS query gave (Hev2.tcp(..., https_rr: true))
      hev2_service: [[U, U], I],
      # 1.5: the report's HTTPS part
      hev2_report_service_lookup: [[U, I, U], I],
      hev2_report_service: [[U, I, U], I],
      hev2_report_skipped: [[U, I, U], I],
      hev2_report_replaced: [[U, I, U], I],
    }.freeze

    handle, PATH = Library.open
    bind = lambda do |name|
      args, ret = SIGNATURES.fetch(name)
      Fiddle::Function.new(handle[name.to_s], args, ret)
    rescue Fiddle::DLError
      raise LibraryError, "hev2: #{PATH} has no symbol #{name}: not a libhev2 this gem can use"
    end

    # The version first: a library of another major version may lack
    # symbols, and its version says more than a missing symbol would.
    VERSION = bind.call(:hev2_version).call
    if VERSION / 10_000 != WRITTEN_FOR / 10_000 || VERSION < WRITTEN_FOR
      raise LibraryError,
            "hev2: #{PATH} is libhev2 #{VERSION}; this gem needs #{WRITTEN_FOR / 10_000}.x, at least #{WRITTEN_FOR}"
    end
    F = SIGNATURES.keys.to_h { |name| [name, bind.call(name)] }.freeze

    # The address of hev2_wait in the library loaded above, for the C
    # extension (Hev2::NoGVL), which calls it through this pointer instead
    # of linking against a libhev2 of its own.
    WAIT_ADDRESS = F[:hev2_wait].to_i

    module_function

    # A C string at addr, as Ruby text.
    def c_string(addr)
      return "" if addr.zero?
      Fiddle::Pointer.new(addr).to_s.force_encoding(Encoding::UTF_8)
    end

    def strerror(status)
      c_string(F[:hev2_strerror].call(status))
    end

    def event_name(kind)
      c_string(F[:hev2_event_name].call(kind))
    end

    # The explanation of c's outcome (thread-local in the library: read at
    # once; Fiddle calls it on this same thread).
    def errmsg(conn)
      c_string(F[:hev2_errmsg].call(conn))
    end

    # The calling thread's last failure: [the library's line naming the
    # function and the detail, the errno behind a HEV2_ESYSTEM or 0]. Read
    # it right after the failed call: Fiddle calls the library on this
    # native thread, and nothing else of hev2 may run on it in between.
    def last_error
      [c_string(F[:hev2_last_error].call), F[:hev2_last_errno].call]
    end
  end
end
