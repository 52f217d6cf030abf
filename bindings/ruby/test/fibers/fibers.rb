# frozen_string_literal: true

# Hev2.tcp under a real Fiber scheduler (make test-ruby-fibers): Debian's
# ruby-async on Ruby 3.1 (any Ruby without the source tree's scheduler);
# on the Ruby built by scripts/build-ruby.sh, the scheduler
# Ruby tests its own Fiber hooks with (test/fiber/scheduler.rb of the same
# source tree, copied to <prefix>/share/hev2-ruby-source/).
#
# Twenty Hev2.tcp to a SYN-dropping loopback listener (connect_timeout) and,
# started last, one to an accepting listener, all in one thread: the last
# one finishes first (no call blocks the others), and each of the twenty
# ends in its own timeout.

require "minitest/autorun"
require "rbconfig"
require "hev2"
require_relative "../loopback"

SOURCE_SCHEDULER = File.join(RbConfig::CONFIG["prefix"], "share/hev2-ruby-source/test/fiber/scheduler.rb")

class TestFiberScheduler < Minitest::Test
  N = 20
  TIMEOUT = 1.0

  def setup
    @drop, @filler = Loopback.syn_dropping("127.0.0.1")
    @ok = Loopback.listener("127.0.0.1")
    @done = []
  end

  def teardown
    [@drop, @filler, @ok].each(&:close)
  end

  def one(label, port, **kw)
    Hev2.tcp("127.0.0.1", port, **kw).close
    @done << [label, :ok]
  rescue StandardError => e
    @done << [label, e.class]
  end

  def jobs
    drop = Loopback.port_of(@drop)
    Array.new(N) { |i| proc { one(i, drop, connect_timeout: TIMEOUT) } } +
      [proc { one(:accepting, Loopback.port_of(@ok)) }]
  end

  def check(took)
    assert_equal N + 1, @done.size
    assert_equal [:accepting, :ok], @done.first, "the accepting connect, started last, finishes first"
    timeouts = @done.drop(1)
    assert_equal [Errno::ETIMEDOUT] * N, timeouts.map(&:last)
    puts "\n#{RUBY_VERSION} #{@scheduler}: #{N} timeouts of #{TIMEOUT} s + 1 connect in one thread took " \
         "#{took.round(2)} s (#{(took / TIMEOUT).round(1)} timeouts)"
  end

  def elapsed
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    yield
    Process.clock_gettime(Process::CLOCK_MONOTONIC) - t
  end

  if File.exist?(SOURCE_SCHEDULER)
    def test_the_source_trees_scheduler
      require SOURCE_SCHEDULER
      @scheduler = "test/fiber/scheduler.rb"
      took = elapsed do
        Thread.new do
          Fiber.set_scheduler(Scheduler.new)
          jobs.each { |j| Fiber.schedule(&j) }
        end.join
      end
      check(took)
    end
  else
    def test_async
      require "async"
      @scheduler = "async #{Async::VERSION}"
      took = elapsed do
        Async do |task|
          jobs.map { |j| task.async(&j) }.each(&:wait)
        end
      end
      check(took)
    end
  end
end
