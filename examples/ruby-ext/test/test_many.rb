# frozen_string_literal: true

require_relative "helper"

# Many connects in flight at once, and the GVL held by busy threads: every
# one completes, exactly once.
class TestMany < ExtTest
  MANY = 200
  RACES = 50 # of MANY: decided on a library thread, after connect returned

  def setup
    super
    @port, @v6, @srv = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                         ->(p) { Loopback.listener("127.0.0.1", 1024, p) })
    later_close(@v6, @srv)
  end

  def start(n)
    Array.new(n) do |i|
      if i < RACES
        Hev2Ext.connect(RACE_NAME, @port, addresses: ["::1", "127.0.0.1"], attempt_delay: 0.01, history: false)
      else
        Hev2Ext.connect("127.0.0.1", @port)
      end
    end
  end

  # Each Pending delivered once, a distinct connected Socket each, the
  # extension's counters agreeing: one callback and one delivery per
  # connect. The job's runs are returned, not bounded: a run woken both by
  # the trigger and by the pump may find the list already taken (empty).
  def check_all_once(pendings, outcomes, before)
    after = Hev2Ext.stats
    socks = outcomes.map(&:last)
    later_close(*socks)
    assert_equal [:ok], outcomes.map(&:first).uniq, outcomes.reject { |o| o.first == :ok }.first(3).inspect
    assert_equal [1], pendings.map(&:completions).uniq
    assert_equal socks.size, socks.map(&:fileno).uniq.size
    assert socks.all? { |s| s.remote_address.ip_port == @port }
    %i[connects callbacks delivered].each do |k|
      assert_equal pendings.size, after[k] - before[k], "#{k} per connect"
    end
    assert_equal 0, after[:orphans]
    assert_equal 0, after[:in_flight]
    runs = after[:job_runs] - before[:job_runs]
    assert_operator runs, :>=, 1
    runs
  end

  def test_many_in_flight_complete_exactly_once
    before = Hev2Ext.stats
    pendings = start(MANY)
    runs = check_all_once(pendings, outcomes(pendings), before)
    puts "\n#{RUBY_VERSION}: #{MANY} connects in flight -> #{runs} job runs (#{Hev2Ext::POSTPONED_JOB_API})"
  end

  # Two threads spin in Ruby code, holding the GVL whenever the scheduler
  # lets them; the main thread starts the connects and waits in
  # Thread::Queue#pop: the completions must still arrive.
  def test_completions_arrive_while_busy_threads_hold_the_gvl
    before = Hev2Ext.stats
    (pendings, outs), busy = with_busy_threads(2) do
      ps = start(MANY / 4)
      [ps, outcomes(ps)]
    end
    check_all_once(pendings, outs, before)
    where = pendings.map(&:job_thread).map do |t|
      if busy.include?(t) then :busy
      elsif t == Thread.main then :main
      else t.name || :other
      end
    end.tally
    puts "\n#{RUBY_VERSION}: busy threads: the job ran on #{where.inspect}"
  end

  # The same with the waiting done by other threads (one per connect).
  def test_waiting_threads_while_busy
    before = Hev2Ext.stats
    (pendings, outs), = with_busy_threads(2) do
      ps = start(20)
      waiters = ps.map { |pe| Thread.new { outcomes([pe]).first } }
      [ps, Timeout.timeout(WAIT_LIMIT) { waiters.map(&:value) }]
    end
    check_all_once(pendings, outs, before)
  end
end
