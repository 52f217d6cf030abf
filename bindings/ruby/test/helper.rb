# frozen_string_literal: true

require "minitest/autorun"
require "hev2"
require_relative "loopback"

# The tests of the race start every connection from RFC 8305's defaults,
# however often they reuse a name: the history is off but in
# test_history.rb, which turns it on around each of its tests.
Hev2.history = false

# Counts the connects of this process that reached their wait (Connector's
# wait_driving on the caller's thread, wait otherwise): from there on, the handle is
# released by an ensure whatever is raised. A test that sends a signal waits
# for this, not for a fixed time: Ruby cannot defer a signal's Interrupt
# (Thread.handle_interrupt does not cover traps), and one raised between
# hev2_connect and the wait would leave the handle to nobody.
module WaitProbe
  class << self
    attr_accessor :entered
  end
  self.entered = 0

  def wait_driving(*)
    WaitProbe.entered += 1
    super
  end

  def wait(*)
    WaitProbe.entered += 1
    super
  end
end
Hev2::Connector.singleton_class.prepend(WaitProbe)

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

  # Waits until more connections than `running` (Hev2.stats[:handles_running]
  # taken before) are pending in the library: a thread's Hev2.tcp is then
  # in its wait. In place of a fixed sleep, which a loaded machine may
  # outlast before the thread even called hev2_connect.
  def wait_until_pending(running)
    assert eventually(10) { Hev2.stats[:handles_running] > running }, "no connection became pending"
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
