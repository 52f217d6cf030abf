# frozen_string_literal: true

require "minitest/autorun"
require "hev2"
require_relative "loopback"

# The tests of the race start every connection from RFC 8305's defaults,
# however often they reuse a name: the history is off but in
# test_history.rb, which turns it on around each of its tests.
Hev2.history = false

# Shared by the gem's tests.
module Helper
  def monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def elapsed
    t = monotonic
    yield
    monotonic - t
  end

  # Waits (up to limit seconds) until the block is true: the library closes
  # its losing attempt sockets on its own threads, just after a call returns.
  def eventually(limit = 2.0)
    deadline = monotonic + limit
    loop do
      return true if yield
      return false if monotonic > deadline
      sleep 0.01
    end
  end

  # The library creates process-wide fds once: its epoll instance on the
  # first connection, and the Go runtime's netpoller (an epoll fd and an
  # eventfd) on the first timer. Make a connection with a timeout before
  # taking a baseline of open fds.
  def warm_up
    r = Loopback.refusing("127.0.0.1")
    Hev2.tcp("127.0.0.1", Loopback.port_of(r), open_timeout: 5)
  rescue Errno::ECONNREFUSED
    nil
  ensure
    r&.close
  end

  def assert_nothing_left(fds_before, handles_before)
    assert eventually { Loopback.open_fds <= fds_before },
           "fds: #{Loopback.open_fds} open, #{fds_before} before"
    stats = Hev2.stats
    assert_equal handles_before, stats[:handles_live], "live handles"
    assert eventually { Hev2.stats[:handles_running].zero? }, "handles still running"
  end

  def closing(*socks)
    yield(*socks)
  ensure
    socks.flatten.each { |s| s.close unless s.closed? }
  end
end
