# frozen_string_literal: true

require "socket"
require_relative "native"
require_relative "scratch"

module Hev2
  # One step of a race, as the library recorded it. at_ms counts from the
  # start of the call; kind is the library's name ("attempt-started", ...);
  # family is :ipv4, :ipv6 or nil; error is an errno (0 if none).
  Event = Struct.new(:at_ms, :kind, :family, :attempt, :address, :port, :error, :eai,
                     :timeout, :detail, keyword_init: true)

  # Reads a done handle's recorded events (hev2_options.record_events) and
  # hands them to a trace callable, on the calling Ruby thread.
  module Events
    FAMILIES = { Socket::AF_INET => :ipv4, Socket::AF_INET6 => :ipv6 }.freeze
    L = Layout::EVENT
    GET = Native::F[:hev2_get_event]

    module_function

    # The header's name of an event kind; a kind newer than this gem's header
    # is named by the library.
    def event_name(kind)
      ABI::EVENT_NAMES.fetch(kind) { Native.event_name(kind) }.dup
    end

    def replay(conn, s, count, trace)
      base = Scratch::EVENT
      count.times do |i|
        rc = GET.call(conn, i, s.address + base)
        break unless rc == Native::OK

        trace.call(Event.new(
          at_ms: s.f64(base + L[:at_ms]).round(3),
          kind: event_name(s.i32(base + L[:kind])),
          family: FAMILIES[s.i32(base + L[:family])],
          attempt: s.i32(base + L[:attempt]),
          address: s.c_string(base + L[:address], Layout::ADDRSTRLEN),
          port: s.i32(base + L[:port]),
          error: s.i32(base + L[:error]),
          eai: s.i32(base + L[:eai]),
          timeout: Native::TIMEOUT_KINDS[s.i32(base + L[:timeout])],
          detail: s.c_string(base + L[:detail], Layout::DETAILLEN),
        ))
      end
    end
  end
end
