# frozen_string_literal: true

require "timeout"
require_relative "helper"
require_relative "fiber_scheduler"

# The wait never holds the GVL, every kind of interrupt stops it at once and
# leaves nothing behind, a Fiber scheduler sees it, and a forked child gets
# an error instead of a hang.
class TestConcurrency < Minitest::Test
  include Helper

  def with_blackhole(ip = "127.0.0.1")
    srv, filler = Loopback.syn_dropping(ip)
    yield Loopback.port_of(srv)
  ensure
    filler&.close
    srv&.close
  end

  def test_other_threads_run_while_a_connection_is_pending
    with_blackhole do |port|
      count = 0
      counting = true
      counter = Thread.new { count += 1 while counting }
      before = count
      assert_raises(Errno::ETIMEDOUT) { Hev2.tcp("127.0.0.1", port, connect_timeout: 0.3) }
      during = count - before
      counting = false
      counter.join
      # A thread starved of the GVL would count (almost) nothing in 0.3 s.
      assert_operator during, :>, 100_000, "the counting thread was starved during the wait"
    end
  end

  # The binding itself: a blocking ABI call (hev2_wait, which the gem does
  # not use on its main path) is made without the GVL, as every Fiddle call
  # of the gem is.
  def test_a_blocking_abi_call_releases_the_gvl
    with_blackhole do |port|
      s = Hev2::Scratch.new
      f = Hev2::Native::F
      rc = f[:hev2_connect_len].call(Fiddle::Pointer["127.0.0.1"].to_i, 9, s.port_string(port), 0,
                                     s.address + Hev2::Scratch::OUT)
      assert_equal Hev2::Native::OK, rc
      conn = s.u64(Hev2::Scratch::OUT)
      count = 0
      counting = true
      counter = Thread.new { count += 1 while counting }
      sleep 0.01
      before = count
      assert_equal Hev2::Native::EAGAIN, f[:hev2_wait].call(conn, 200) # blocks 200 ms
      during = count - before
      counting = false
      counter.join
      assert_equal Hev2::Native::OK, f[:hev2_release].call(conn)
      assert_operator during, :>, 100_000, "hev2_wait held the GVL"
    end
  end

  def test_timeout_interrupts_at_once_and_leaves_nothing
    with_blackhole("::1") do |port|
      warm_up
      fds = Loopback.open_fds
      live = Hev2.stats[:handles_live]
      t = elapsed do
        assert_raises(Timeout::Error) { Timeout.timeout(0.1) { Hev2.tcp("::1", port) } }
      end
      assert_operator t, :<, 2.0, "Timeout.timeout(0.1) took #{t} s (a SYN-dropped connect hangs ~127 s)"
      assert_nothing_left(fds, live)
    end
  end

  class Stop < StandardError; end

  def test_thread_raise_interrupts_and_leaves_nothing
    with_blackhole do |port|
      warm_up
      fds = Loopback.open_fds
      live = Hev2.stats[:handles_live]
      running = Hev2.stats[:handles_running]
      th = Thread.new { Hev2.tcp("127.0.0.1", port) }
      th.report_on_exception = false
      wait_until_pending(running)
      t = elapsed do
        th.raise(Stop, "stop")
        assert_raises(Stop) { th.join }
      end
      # within a wait slice (5 ms); the bound leaves room for a loaded
      # 2-core machine, far from a SYN-dropped connect's ~127 s
      assert_operator t, :<, 2.0
      assert_nothing_left(fds, live)
    end
  end

  def test_thread_kill_leaves_nothing
    with_blackhole do |port|
      warm_up
      fds = Loopback.open_fds
      live = Hev2.stats[:handles_live]
      running = Hev2.stats[:handles_running]
      th = Thread.new { Hev2.tcp("127.0.0.1", port) }
      wait_until_pending(running)
      assert_operator elapsed { th.kill.join }, :<, 2.0
      refute th.alive?
      assert_nothing_left(fds, live)
    end
  end

  def test_ctrl_c_interrupts_and_leaves_nothing
    with_blackhole("::1") do |port|
      warm_up
      fds = Loopback.open_fds
      live = Hev2.stats[:handles_live]
      entered = WaitProbe.entered
      signaller = Thread.new do
        sleep 0.001 until WaitProbe.entered > entered # the connect is in its wait
        Process.kill(:INT, Process.pid)
      end
      t = elapsed { assert_raises(Interrupt) { Hev2.tcp("::1", port) } }
      signaller.join
      assert_operator t, :<, 2.0
      assert_nothing_left(fds, live)
    end
  end

  def test_over_capacity_is_an_error_not_a_wait
    with_blackhole do |port|
      # No handle of an earlier test may still be running (the library
      # closes a race's losers on its own threads, just after a call
      # returns): it would take the one slot.
      assert eventually(10) { Hev2.stats[:handles_running].zero? }, "a handle of an earlier test still runs"
      Hev2.max_handles = 1
      pending = Thread.new { Hev2.tcp("127.0.0.1", port, connect_timeout: 0.5) }
      pending.report_on_exception = false
      assert eventually { Hev2.stats[:handles_running] == 1 }
      e = assert_raises(Hev2::Error) { Hev2.tcp("127.0.0.1", port) }
      assert_equal Hev2::Native::ECAPACITY, e.status
      # the library's own account of the refusal (hev2_last_error)
      assert_match(/hev2_connect_(len|wait): over capacity: 1 handles running/, e.message)
      assert_raises(Errno::ETIMEDOUT) { pending.value }
      e = assert_raises(ArgumentError) { Hev2.max_handles = 0 }
      assert_includes e.message, "hev2_set_max_handles: max 0 out of range [1, 1000000]"
    ensure
      Hev2.max_handles = 4096
    end
  end

  def test_many_threads_at_once
    v6, v4, port = Loopback.dual_listeners
    closing(v6, v4) do
      threads = 20.times.map do |i|
        Thread.new { Hev2.tcp(i.even? ? "::1" : "127.0.0.1", port) { |s| s.remote_address.ip_address } }
      end
      assert_equal 20, threads.map(&:value).size
    end
  end

  def test_a_fiber_scheduler_runs_other_fibers_during_the_wait
    # ::1 drops SYNs, 127.0.0.1 listens, on one port
    port, (srv6, filler), v4 = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                                 ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    closing(srv6, filler, v4) do
      result = Thread.new do
        scheduler = TinyScheduler.new
        Fiber.set_scheduler(scheduler)
        ticks = 0
        ticks_when_connected = nil
        winner = nil
        Fiber.schedule do
          Hev2.tcp("both.test", port, addresses: ["::1", "127.0.0.1"]) do |sock|
            winner = sock.remote_address.ip_address
            ticks_when_connected = ticks
          end
        end
        Fiber.schedule do
          30.times do
            sleep 0.01
            ticks += 1
          end
        end
        scheduler.run
        [winner, ticks_when_connected, scheduler.io_waits]
      end.value
      winner, ticks_when_connected, io_waits = result
      assert_equal "127.0.0.1", winner
      # The connection took one attempt delay (250 ms): the ticking fiber
      # ran meanwhile.
      assert_operator ticks_when_connected, :>=, 5
      refute_empty io_waits, "Hev2.tcp did not wait through the scheduler"
    end
  end

  def test_fork_child_gets_a_clear_error_not_a_hang
    closing(Loopback.listener("127.0.0.1")) do |srv|
      Hev2.tcp("127.0.0.1", Loopback.port_of(srv)).close # the parent used the library
      reader, writer = IO.pipe
      pid = fork do
        reader.close
        begin
          Hev2.tcp("127.0.0.1", Loopback.port_of(srv))
          writer.write("connected")
        rescue Hev2::ForkedError => e
          writer.write("ForkedError: #{e.message}")
        rescue Exception => e # rubocop:disable Lint/RescueException
          writer.write("#{e.class}: #{e.message}")
        end
        writer.close
        exit!(0) # skip at_exit: minitest must not run again in the child
      end
      writer.close
      status = nil
      deadline = monotonic + 10
      while monotonic < deadline
        _, status = Process.wait2(pid, Process::WNOHANG)
        break if status
        sleep 0.02
      end
      unless status
        Process.kill(:KILL, pid)
        Process.wait(pid)
        flunk "the forked child hung"
      end
      said = reader.read
      reader.close
      assert_match(/\AForkedError: .*fork/, said)
    end
  end
end
