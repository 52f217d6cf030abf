# frozen_string_literal: true

module Hev2
  # Byte offsets of the C structs of include/hev2.h on LP64 Linux (x86_64,
  # aarch64). test/test_layout.rb compiles a C program against the header
  # and checks every number here, so a header change cannot go unnoticed.
  module Layout
    OPTIONS = {
      size: 0, resolution_delay_ms: 8, connection_attempt_delay_ms: 12,
      first_address_family_count: 16, resolv_timeout_ms: 20, connect_timeout_ms: 24,
      open_timeout_ms: 28, fast_fallback: 32, family: 36, local_host: 40, local_port: 48,
      resolver: 52, nameservers: 56, static_hosts: 64, nodelay: 72, keepalive_ms: 76,
      blocking: 80, on_done: 88, on_done_data: 96, job: 104, record_events: 108
    }.freeze
    OPTIONS_SIZE = 112

    RESULT = {
      size: 0, status: 8, fd: 12, family: 16, port: 20, address: 24, sockaddr: 88,
      sockaddr_len: 216, elapsed_ms: 224, error: 232, eai: 236, timeout: 240,
      lookups: 248, n_attempts: 312, n_events: 316
    }.freeze
    RESULT_SIZE = 320

    LOOKUP = { family: 0, state: 4, eai: 8, sys_errno: 12, n_addrs: 16, elapsed_ms: 24 }.freeze
    LOOKUP_SIZE = 32

    ATTEMPT = {
      size: 0, address: 8, family: 72, port: 76, error: 80, won: 84, bind_failed: 88,
      start_ms: 96, end_ms: 104
    }.freeze
    ATTEMPT_SIZE = 112

    EVENT = {
      size: 0, at_ms: 8, kind: 16, family: 20, attempt: 24, address: 28, port: 92,
      error: 96, eai: 100, timeout: 104, detail: 108
    }.freeze
    EVENT_SIZE = 272

    STATS = {
      size: 0, handles_created: 8, handles_live: 16, handles_running: 24, max_handles: 32,
      over_capacity: 40, callbacks_fired: 48, jobs_registered: 56, jobs_triggered: 64,
      jobs_run: 72, lookups_in_flight: 80, lookups_queued: 88, lookups_abandoned: 96,
      resolver_threads: 104, max_lookups: 112
    }.freeze
    STATS_SIZE = 120

    ADDRSTRLEN = 64
    DETAILLEN = 160
  end
end
