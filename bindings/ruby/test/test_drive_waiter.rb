# frozen_string_literal: true

require "timeout"
require "rbconfig"
require_relative "helper"
require_relative "test_concurrency"

# The waiter drive (HEV2_DRIVE_WAITER): Hev2.tcp plays the race on the calling thread
# (HEV2_DRIVE_WAITER) inside Hev2::NoGVL.wait, the C extension that waits
# without the GVL and lets Ruby interrupt it. `make test-ruby-unit` builds
# the extension and sets HEV2_EXPECT_EXT=1.
class TestCallerThread < Minitest::Test
  include Helper

  # Counts NoGVL.wait calls and checks, before each, that the handle is
  # driven by its waiter: such a handle makes no progress while nobody
  # waits, so its result is still pending (HEV2_EAGAIN) however long ago
  # hev2_connect returned, even for a connect that the kernel completes at
  # once. A library-driven handle would be done by then.
  module Spy
    class << self
      attr_accessor :on, :calls, :pending_before_wait, :connects, :waiting
    end
    self.calls = 0
    self.connects = []

    # NoGVL.connect: what each call returned (an fd when the race was
    # decided inside that one call, on this thread).
    def connect(*args)
      r = super
      Spy.connects << r if Spy.on
      r
    end

    # (Only during this class's tests: other tests' connects pass through.)
    def wait(address, conn)
      return super unless Spy.on

      Spy.calls += 1
      if Spy.calls == 1
        sleep 0.05 # (the GVL is free: a library thread could finish the race now)
        scratch = Hev2::Scratch.new
        Spy.pending_before_wait = Hev2::Native::F[:hev2_result].call(conn, scratch.address + Hev2::Scratch::RESULT)
      end
      Spy.waiting = true
      super
    end
  end
  Hev2::NoGVL.singleton_class.prepend(Spy) if Hev2::NoGVL.available?

  def setup
    unless Hev2::NoGVL.available?
      flunk "Hev2::NoGVL (the C extension) is not loaded" if ENV["HEV2_EXPECT_EXT"] == "1"
      skip "the C extension is not built (make ruby-ext)"
    end
    Spy.calls = 0
    Spy.connects = []
    Spy.pending_before_wait = nil
    Spy.waiting = false
    Spy.on = true
    Hev2::Connector.drive = :waiter
  end

  def teardown
    Spy.on = false
  end

  def test_drive_takes_waiter_or_library_and_the_earlier_spelling
    Hev2::Connector.drive = :library
    refute Hev2::Connector.caller_thread
    Hev2::Connector.caller_thread = true
    assert_equal :waiter, Hev2::Connector.drive
    error = assert_raises(ArgumentError) { Hev2::Connector.drive = :caller }
    assert_match(/drive must be :waiter or :library/, error.message)
    assert_equal :waiter, Hev2::Connector.drive
  end

  def test_the_extension_is_loaded_and_used_by_default
    assert_kind_of Module, Hev2::NoGVL
    assert_equal 5, Hev2::NoGVL::SLICE_MS
    assert_equal :waiter, Hev2::Connector.drive
    options = Fiddle::Pointer.new(Hev2::Connector::WAITER_OPTIONS)
    assert_equal Hev2::Native::DRIVE_WAITER, options[Hev2::Layout::OPTIONS[:drive], 4].unpack1("l")
    assert_equal Hev2::Layout::OPTIONS_SIZE, options[0, 8].unpack1("Q")
  end

  # A healthy connect once the library is started is one call,
  # NoGVL.connect (hev2_connect_wait with a zero timeout, without the GVL):
  # the race is played and won inside it, on this thread; no wait follows.
  def test_a_plain_connect_is_one_call_on_the_calling_thread
    Hev2.init
    closing(Loopback.listener("127.0.0.1")) do |srv|
      peer = Hev2.tcp("127.0.0.1", Loopback.port_of(srv)) { |s| s.remote_address.ip_address }
      assert_equal "127.0.0.1", peer
      assert_equal 1, Spy.connects.size
      assert_operator Spy.connects.first, :>=, 0, "NoGVL.connect returned a status, not the winner's fd"
      assert_equal 0, Spy.calls
    end
  end

  # A race that its first look does not decide (SYNs dropped) goes on in
  # NoGVL.wait: the handle NoGVL.connect left was not driven meanwhile.
  def test_an_undecided_race_goes_on_in_the_wait
    Hev2.init
    with_blackhole do |port|
      assert_raises(Errno::ETIMEDOUT) { Hev2.tcp("127.0.0.1", port, connect_timeout: 0.2) }
      assert_equal [Hev2::Native::EAGAIN], Spy.connects
      assert_operator Spy.calls, :>=, 1
      assert_equal Hev2::Native::EAGAIN, Spy.pending_before_wait
    end
  end

  def test_a_connect_with_options_is_driven_by_the_waiting_thread
    closing(Loopback.listener("::1")) do |srv|
      events = []
      peer = Hev2.tcp("::1", Loopback.port_of(srv), connect_timeout: 5, nodelay: true,
                                                    trace: ->(e) { events << e }) { |s| s.remote_address.ip_address }
      assert_equal "::1", peer
      assert_equal 1, Spy.calls
      assert_equal Hev2::Native::EAGAIN, Spy.pending_before_wait
      refute_empty events
    end
  end

  def test_the_eventfd_path_when_switched_off
    Hev2::Connector.drive = :library
    closing(Loopback.listener("127.0.0.1")) do |srv|
      assert_equal "127.0.0.1", Hev2.tcp("127.0.0.1", Loopback.port_of(srv)) { |s| s.remote_address.ip_address }
      assert_equal 0, Spy.calls
    end
  ensure
    Hev2::Connector.drive = :waiter
  end

  def with_blackhole(ip = "127.0.0.1")
    srv, filler = Loopback.syn_dropping(ip)
    yield Loopback.port_of(srv)
  ensure
    filler&.close
    srv&.close
  end

  class Stop < StandardError; end

  def test_thread_raise_interrupts_the_waiter_driven_race
    with_blackhole do |port|
      warm_up
      fds = Loopback.open_fds
      live = Hev2.stats[:handles_live]
      th = Thread.new { Hev2.tcp("127.0.0.1", port) }
      th.report_on_exception = false
      assert eventually(10) { Spy.waiting }, "the thread never reached NoGVL.wait" # past the spy's own 50 ms
      t = elapsed do
        th.raise(Stop, "stop")
        assert_raises(Stop) { th.join }
      end
      assert_operator t, :<, 2.0
      assert_operator Spy.calls, :>=, 1, "the race did not run in NoGVL.wait"
      assert_nothing_left(fds, live)
    end
  end

  def test_timeout_interrupts_the_waiter_driven_race
    with_blackhole("::1") do |port|
      warm_up
      fds = Loopback.open_fds
      live = Hev2.stats[:handles_live]
      t = elapsed do
        assert_raises(Timeout::Error) { Timeout.timeout(0.2) { Hev2.tcp("::1", port) } }
      end
      assert_operator t, :<, 2.0
      assert_operator Spy.calls, :>=, 1, "the race did not run in NoGVL.wait"
      assert_nothing_left(fds, live)
    end
  end

  # The GVL is free while one thread waits: another counts meanwhile.
  def test_another_thread_runs_while_one_waits
    with_blackhole do |port|
      count = 0
      counting = true
      counter = Thread.new { count += 1 while counting }
      Thread.pass until count.positive? # the counter runs
      before = count
      t = elapsed { assert_raises(Errno::ETIMEDOUT) { Hev2.tcp("127.0.0.1", port, connect_timeout: 0.3) } }
      during = count - before
      counting = false
      counter.join
      # The wait comes back to Ruby every 100 ms (NoGVL's RUBY_EVERY_SLICES)
      # and at once when interrupted: no more calls than that.
      assert_operator Spy.calls, :<=, (t / 0.1).floor + 1, "the wait was interrupted (#{t} s)"
      assert_operator during, :>, 100_000, "the counting thread was starved during the wait"
    end
  end

  # A signal whose handler raises nothing interrupts the wait all the same;
  # the race must go on where it was (the IPv4 attempt starts 250 ms after
  # the IPv6 one, a delay that a restarted race would never reach under a
  # stream of signals) and end as usual.
  def test_a_stream_of_signals_that_raise_nothing_loses_no_progress
    # ::1 drops SYNs, 127.0.0.1 listens, on one port
    port, (srv6, filler), v4 = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                                 ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    got = 0
    old = trap(:USR1) { got += 1 }
    closing(srv6, filler, v4) do
      stop = false
      pid = Process.pid
      sender = Thread.new do
        until stop
          Process.kill(:USR1, pid)
          sleep 0.02
        end
      end
      begin
        peer = Hev2.tcp("both.test", port, addresses: ["::1", "127.0.0.1"]) { |s| s.remote_address.ip_address }
      ensure
        stop = true
        sender.join
      end
      assert_equal "127.0.0.1", peer
      assert_operator got, :>, 0
      assert_operator Spy.calls, :>, 1, "no signal came back to Ruby during the wait"
    end
  ensure
    trap(:USR1, old || "DEFAULT")
  end

  # Ctrl-C to a process blocked in Hev2.tcp on its main thread: Interrupt,
  # and no fd of the race left in that process.
  def test_ctrl_c_in_a_child_process
    with_blackhole do |port|
      script = <<~RUBY
        require "hev2"
        abort "no extension" unless Hev2::NoGVL.available? && Hev2::Connector.drive == :waiter
        Hev2.init
        fds = Dir.children("/proc/self/fd").size
        # "ready" once the connect is in this thread's wait (a thread of
        # its own says so: the main thread is in NoGVL.wait), where an
        # Interrupt finds the handle's ensure
        entered = Queue.new
        Hev2::Connector.singleton_class.prepend(Module.new do
          define_method(:wait_driving) { |*a| entered << true; super(*a) }
        end)
        Thread.new do
          entered.pop
          $stdout.puts "ready"
          $stdout.flush
        end
        begin
          Hev2.tcp("127.0.0.1", #{port})
          puts "connected?"
        rescue Interrupt
          sleep 0.01 until Hev2.stats[:handles_running].zero?
          puts "Interrupt, fds #{'#{Dir.children("/proc/self/fd").size - fds}'}"
        end
      RUBY
      IO.popen([RbConfig.ruby, *$LOAD_PATH.grep(%r{/(lib|ruby-ext/[^/]+)\z}).map { |d| "-I#{d}" }, "-e", script],
               err: %i[child out]) do |io|
        assert_equal "ready\n", io.gets # inside the wait (a connect to this port hangs ~127 s)
        t = elapsed do
          Process.kill(:INT, io.pid)
          assert_equal "Interrupt, fds 0\n", io.gets
        end
        assert_operator t, :<, 5.0
      end
      assert $?.success?, "child: #{$?.inspect}"
    end
  end
end

# The interrupt, GVL and Fiber scheduler tests of TestConcurrency once more
# on the other path: the race on a library thread, the caller waiting on
# the handle's eventfd (the path used without the C extension).
class TestConcurrencyEventfdPath < TestConcurrency
  def setup
    @was = Hev2::Connector.drive
    Hev2::Connector.drive = :library
  end

  def teardown
    Hev2::Connector.drive = @was
  end
end
