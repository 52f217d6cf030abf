# frozen_string_literal: true

# The suite of examples/ruby-ext (make test-extension-ruby): Hev2Ext built
# from pkg-config, on the loopback endpoints of the gem's tests (a listener,
# a refusing port, a SYN-dropping listener, several on one port number).
require "minitest/autorun"
require "socket"
require "timeout"
require "hev2_ext"
require_relative "../../../bindings/ruby/test/loopback"

module ExtHelper
  # The bound on any wait of the suite: far above what a loaded machine
  # takes, so that a lost completion fails instead of hanging.
  WAIT_LIMIT = 60

  # A name given its addresses (Hev2Ext.connect's addresses:), so that the
  # race needs no resolver: the name is never looked up.
  RACE_NAME = "race.hev2-ext.test"

  module_function

  def open_fds
    Dir.children("/proc/self/fd").size
  end

  def ruby_threads
    Thread.list.count(&:alive?)
  end

  # The process's OS threads: Ruby's, and the Go runtime's inside libhev2,
  # which starts one as its load changes and keeps it (a thread per connect
  # left behind would show as hundreds). Counted only in tests that start
  # no Ruby thread: Ruby keeps the OS thread of a finished Thread for a few
  # seconds, for the next Thread.new to reuse.
  def os_threads
    Dir.children("/proc/self/task").size
  end
  OS_THREAD_ROOM = 8

  # Every Pending's outcome: [:ok, Socket] or [:error, exception], waited
  # for within WAIT_LIMIT.
  def outcomes(pendings)
    Timeout.timeout(WAIT_LIMIT) do
      pendings.map do |pe|
        [:ok, pe.value]
      rescue Hev2Ext::Error => e
        [:error, e]
      end
    end
  end

  # Runs the block while `n` Ruby threads spin on the CPU (holding the GVL
  # whenever they can); returns the block's value and the threads.
  def with_busy_threads(n)
    starts_ruby_threads
    stop = false
    spins = Array.new(n) { 0 }
    busy = Array.new(n) do |i|
      Thread.new do
        spins[i] += 1 until stop
      end
    end
    Thread.pass until spins.all?(&:positive?) # each one is running
    [yield, busy]
  ensure
    stop = true
    busy&.each(&:join)
  end
end

# The first connect starts the Go runtime's threads, the library's permanent
# fds and the extension's pump thread, and the first Timeout.timeout the
# timeout library's own thread (Ruby 3.4): made here once, so that each
# test's before/after counts see only what the test itself made.
Timeout.timeout(ExtHelper::WAIT_LIMIT) do
  warm = Loopback.listener("127.0.0.1")
  Hev2Ext.connect("127.0.0.1", Loopback.port_of(warm)).value.close
  warm.close
end

# Each test counts fds and threads before and after: nothing it made may
# be left open or running.
class ExtTest < Minitest::Test
  include ExtHelper

  def setup
    @fds_before = open_fds
    @threads_before = ruby_threads
    @os_threads_before = os_threads
    @closing = []
  end

  # The fd count once it equals want, or after WAIT_LIMIT: a failed
  # attempt's socket may be closed by a library thread just after the
  # outcome was delivered, so an exact count taken at once can see it
  # still open; a leak stays and fails.
  def fds_settled(want)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + ExtHelper::WAIT_LIMIT
    loop do
      n = open_fds
      return n if n == want || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      Thread.pass
    end
  end

  def teardown
    @closing.flatten.each { |s| s.close unless s.closed? }
    assert_equal @threads_before, ruby_threads, "Ruby threads before and after"
    assert_equal @fds_before, fds_settled(@fds_before), "open fds before and after"
    return if @starts_ruby_threads

    assert_operator os_threads, :<=, @os_threads_before + OS_THREAD_ROOM, "OS threads before and after"
  end

  # Called by a test that starts Ruby threads (see os_threads).
  def starts_ruby_threads
    @starts_ruby_threads = true
  end

  # Sockets closed by teardown, before the counts.
  def later_close(*socks)
    @closing.concat(socks)
    socks.size == 1 ? socks.first : socks
  end
end
