# frozen_string_literal: true

require_relative "helper"

# hev2_cancel through Pending#cancel: its completion still comes, once,
# reports the cancel, and leaves no fd behind.
class TestCancel < ExtTest
  def setup
    super
    @drop = later_close(Loopback.syn_dropping("127.0.0.1"))
    @srv = later_close(Loopback.listener("127.0.0.1", 1024))
  end

  def hanging
    Hev2Ext.connect("127.0.0.1", Loopback.port_of(@drop.first))
  end

  def accepting
    Hev2Ext.connect("127.0.0.1", Loopback.port_of(@srv))
  end

  def test_cancel_a_hanging_connect
    pending = hanging
    refute pending.done?
    assert_same pending, pending.cancel
    e = assert_raises(Hev2Ext::Canceled) { Timeout.timeout(WAIT_LIMIT) { pending.value } }
    assert_equal Hev2Ext::ECANCELED, e.status
    assert pending.canceled?
    assert_equal 1, pending.completions
    pending.cancel # done: a no-op
  end

  # 20 hanging connects among 100 that connect at once; the 20 are
  # canceled while everything is in flight.
  def test_cancel_in_the_middle_of_many
    pendings = Array.new(120) { |i| (i % 6).zero? ? hanging : accepting }
    hung = pendings.each_with_index.select { |_, i| (i % 6).zero? }.map(&:first)
    hung.each(&:cancel)
    outs = outcomes(pendings)
    later_close(*outs.select { |kind, _| kind == :ok }.map(&:last))
    pendings.zip(outs).each_with_index do |(pe, (kind, what)), i|
      if (i % 6).zero?
        assert_equal :error, kind
        assert_instance_of Hev2Ext::Canceled, what
      else
        assert_equal :ok, kind, what.inspect
      end
      assert_equal 1, pe.completions
    end
  end

  def test_cancel_after_the_outcome_changes_nothing
    pending = accepting
    sock = later_close(pending.value)
    pending.cancel
    assert_equal 0, pending.status
    assert_same sock, pending.value
  end

  # Canceled at moments spread over 0-20 ms after connect returned, around
  # the moment the race is decided on a library thread (IPv4 starts 10 ms
  # after the SYN-dropped IPv6): each outcome is a Socket or Canceled, never
  # both, never neither, and every winning fd ends up in its Socket (closed
  # by teardown), whichever side of the decision the cancel fell.
  def test_cancel_racing_the_completion
    port, v6, v4 = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                     ->(p) { Loopback.listener("127.0.0.1", 1024, p) })
    later_close(v6, v4)
    pendings = Array.new(60) do |i|
      pe = Hev2Ext.connect(RACE_NAME, port, addresses: ["::1", "127.0.0.1"], attempt_delay: 0.01, history: false)
      cancel_at = Process.clock_gettime(Process::CLOCK_MONOTONIC) + ((i % 20) / 1000.0)
      Thread.pass while Process.clock_gettime(Process::CLOCK_MONOTONIC) < cancel_at
      pe.cancel
    end
    outs = outcomes(pendings)
    later_close(*outs.select { |kind, _| kind == :ok }.map(&:last))
    outs.each do |kind, what|
      assert(kind == :ok || what.is_a?(Hev2Ext::Canceled), what.inspect)
    end
    assert_equal [1], pendings.map(&:completions).uniq
    tally = outs.map { |kind, what| kind == :ok ? :connected : what.class.name }.tally
    puts "\n#{RUBY_VERSION}: canceled 0-20 ms into a 10 ms race: #{tally.inspect}"
  end
end
