# frozen_string_literal: true

require_relative "helper"
require "rbconfig"

# Pending#value under a Fiber scheduler waits through the scheduler (the
# Pending's eventfd, io_wait): other fibers of the thread go on meanwhile.
# The scheduler: Ruby's own (the source tree's test/fiber/scheduler.rb,
# kept by scripts/build-ruby.sh) where the Ruby has it, else Debian's
# ruby-async.
class TestFibers < ExtTest
  SOURCE_SCHEDULER = File.join(RbConfig::CONFIG["prefix"], "share/hev2-ruby-source/test/fiber/scheduler.rb")

  def in_scheduler(&block)
    if File.exist?(SOURCE_SCHEDULER)
      require SOURCE_SCHEDULER
      starts_ruby_threads
      Thread.new do
        Fiber.set_scheduler(Scheduler.new)
        block.call
      end.join
    else
      require "async"
      Async { block.call }
    end
  end

  # A fiber waits on a connect that hangs until its open_timeout; fibers
  # started after it connect at once and finish first.
  def test_value_lets_other_fibers_run
    drop = later_close(Loopback.syn_dropping("127.0.0.1"))
    srv = later_close(Loopback.listener("127.0.0.1"))
    finished = []
    fds_before = open_fds
    Timeout.timeout(WAIT_LIMIT) do
      in_scheduler do
        Fiber.schedule do
          Hev2Ext.connect("127.0.0.1", Loopback.port_of(drop.first), open_timeout: 0.5).value
        rescue Hev2Ext::Error => e
          finished << [:hanging, e.status]
        end
        5.times do |i|
          Fiber.schedule do
            Hev2Ext.connect("127.0.0.1", Loopback.port_of(srv)).value.close
            finished << [i, :ok]
          end
        end
      end
    end
    assert_equal (0..4).map { |i| [i, :ok] }, finished.first(5).sort
    assert_equal [:hanging, Hev2Ext::ETIMEOUT], finished.last
    assert_equal fds_before, open_fds, "the fibers' eventfds are closed"
  end
end
