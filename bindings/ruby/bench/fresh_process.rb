# frozen_string_literal: true

# A script that requires hev2 and connects once, beside the same script with
# Ruby's own socket, as whole fresh processes of this Ruby (make
# bench-ruby-fresh, on each Ruby of RUBIES):
#
#   hev2:   require "hev2";   Hev2.tcp("127.0.0.1", port)
#   socket: require "socket"; Socket.tcp("127.0.0.1", port)
#
# Socket.tcp, as Hev2.tcp mirrors it. BENCH_PAIRS pairs (30 by default, at
# least 20), the order alternating from pair to pair. Each process's wall
# time is taken by this parent with CLOCK_MONOTONIC around Process.spawn and
# Process.wait; the row is the median of the per-pair differences (goal: at
# most 15 ms). Each child also stamps the same clock after its interpreter
# started, after the require and after the connect, so the parent splits the
# whole into interpreter start, require, first connect and exit; and reads
# its VmRSS after the require and its VmRSS and VmHWM after the connect (the
# memory rows).
#
# After each pair a third process makes the hev2 side's first connect in
# steps, to show where its time goes: require "socket", require "fiddle",
# Fiddle::Handle.new (dlopen, as the gem opens the library), a first call
# into Go that does nothing of hev2's (hev2_set_max_handles(its default):
# the Go runtime's start and the packages' initialisation), hev2_init,
# require "hev2" (the gem's own code: the library is open already), the
# first Hev2.tcp, then a second for reference.
#
# The children get this process's environment (RUBYLIB names the gem and
# its C extension; HEV2_LIBRARY the library). The listener is this
# process's, never accepted from while a child runs (the handshake needs no
# accept; the queue is emptied between pairs).
require "rbconfig"
require "socket"
require_relative "rows"

module FreshProcess
  PAIRS = Integer(ENV.fetch("BENCH_PAIRS", "30"))
  HEADER = File.expand_path("../../../include/hev2.h", __dir__)

  STAMP = "t << Process.clock_gettime(Process::CLOCK_MONOTONIC)\n"
  MEMORY = <<~'RUBY'
    def memory
      File.foreach("/proc/self/status").each_with_object({}) do |line, h|
        key, kib = line.split
        h[key] = kib if key == "VmRSS:" || key == "VmHWM:"
      end
    end
  RUBY
  # One line out: the three stamps, VmRSS after the require, VmRSS and
  # VmHWM after the connect (KiB).
  SCRIPT = "t = [Process.clock_gettime(Process::CLOCK_MONOTONIC)]\n@LOAD@\n#{STAMP}#{MEMORY}m = memory\n#{STAMP}" \
           "s = @CONNECT@\n#{STAMP}s.close\nn = memory\n" \
           "puts [*t, m[\"VmRSS:\"], n[\"VmRSS:\"], n[\"VmHWM:\"]].join(\" \")\n"
  SIDES = {
    "hev2" => SCRIPT.sub("@LOAD@", 'require "hev2"').sub("@CONNECT@", 'Hev2.tcp("127.0.0.1", @PORT@)'),
    "socket" => SCRIPT.sub("@LOAD@", 'require "socket"').sub("@CONNECT@", 'Socket.tcp("127.0.0.1", @PORT@)'),
  }.freeze
  STEPS = [
    ['require "socket"', 'require "socket"'],
    ['require "fiddle"', 'require "fiddle"'],
    ["Fiddle::Handle.new (dlopen)",
     'lib = Fiddle::Handle.new(ENV.fetch("HEV2_LIBRARY"), Fiddle::RTLD_NOW | Fiddle::RTLD_GLOBAL)'],
    ["first call into Go (runtime start, package init)",
     'Fiddle::Function.new(lib["hev2_set_max_handles"], [Fiddle::TYPE_INT], Fiddle::TYPE_INT).call(@MAX_HANDLES@)'],
    ["hev2_init", 'Fiddle::Function.new(lib["hev2_init"], [], Fiddle::TYPE_INT).call'],
    ['require "hev2" (the gem\'s own code)', 'require "hev2"'],
    ["first Hev2.tcp", 'Hev2.tcp("127.0.0.1", @PORT@).close'],
    ["second Hev2.tcp", 'Hev2.tcp("127.0.0.1", @PORT@).close'],
  ].freeze
  SPLIT = "t = [Process.clock_gettime(Process::CLOCK_MONOTONIC)]\n" +
          STEPS.map { |_, code| "#{code}\n#{STAMP}" }.join + "puts t.join(\" \")\n"
  STAGES = ["interpreter start", "require", "reading VmRSS", "first connect", "exit", "whole"].freeze

  module_function

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def default_max_handles
    File.read(HEADER)[/^#define HEV2_DEFAULT_MAX_HANDLES (\d+)/, 1] or abort "no HEV2_DEFAULT_MAX_HANDLES in #{HEADER}"
  end

  # Runs ruby -e code: its spawn time, the time Process.wait returned, and
  # the numbers of its one line.
  def spawn(code)
    r, w = IO.pipe
    t0 = now
    pid = Process.spawn(RbConfig.ruby, "-e", code, out: w)
    Process.wait(pid)
    t1 = now
    w.close
    status = $?
    out = r.read
    r.close
    abort "a child failed (#{status}); its code:\n#{code}" unless status.success?
    [t0, t1, out.split.map { |x| Float(x) }]
  end

  def drain(listener)
    loop { listener.accept_nonblock.first.close }
  rescue IO::WaitReadable
    nil
  end

  def ms(values)
    med, lo, hi = Rows.spread(values)
    format("%8.2f [%.2f .. %.2f]", med, lo, hi)
  end

  def measure(listener, codes, split)
    by = codes.keys.to_h { |side| [side, STAGES.to_h { |s| [s, []] }] }
    memory = codes.keys.to_h { |side| [side, { require: [], rss: [], hwm: [] }] }
    steps = Array.new(STEPS.size) { [] }
    edges = { start: [], exit: [] }
    PAIRS.times do |i|
      (i.even? ? codes.keys : codes.keys.reverse).each do |side|
        t0, t1, (a, b, m, c, rss_require, rss, hwm) = spawn(codes[side])
        STAGES.zip([a - t0, b - a, m - b, c - m, t1 - c, t1 - t0]).each { |stage, v| by[side][stage] << v * 1e3 }
        memory[side][:require] << rss_require / 1024
        memory[side][:rss] << rss / 1024
        memory[side][:hwm] << hwm / 1024
      end
      t0, t1, t = spawn(split)
      edges[:start] << (t.first - t0) * 1e3
      edges[:exit] << (t1 - t.last) * 1e3
      STEPS.size.times { |j| steps[j] << (t[j + 1] - t[j]) * 1e3 }
      drain(listener)
    end
    [by, memory, steps, edges]
  end

  def report(by, memory, steps, edges)
    puts "ruby #{RUBY_VERSION}: fresh processes, #{PAIRS} pairs alternated; ms from the parent's spawn, split by the " \
         "child's stamps (exit: its last stamp to the parent's wait); median [min .. max]"
    printf("  %-20s %26s %26s %30s\n", "", "hev2", "socket", "hev2 - socket, per pair")
    STAGES.each do |stage|
      diff = by["hev2"][stage].zip(by["socket"][stage]).map { |h, s| h - s }
      printf("  %-20s %26s %26s %30s\n", stage, ms(by["hev2"][stage]), ms(by["socket"][stage]), ms(diff))
    end
    Rows.row("ruby #{RUBY_VERSION} script: require hev2 + Hev2.tcp - Socket.tcp's, whole process",
             by["hev2"]["whole"].zip(by["socket"]["whole"]).map { |h, s| h - s }, "ms",
             goal: 15, detail: "fresh processes, per-pair differences")
    { rss: "VmRSS", hwm: "VmHWM" }.each do |key, label|
      h = memory["hev2"][key]
      s = memory["socket"][key]
      Rows.row("ruby #{RUBY_VERSION} memory #{label}: require \"hev2\" + one connect - socket's",
               h.zip(s).map { |a, b| a - b }, "MB",
               detail: format("hev2 %.1f MB, socket %.1f MB", Rows.spread(h).first, Rows.spread(s).first))
    end
    printf("  VmRSS after the require alone: hev2 %.1f MB, socket %.1f MB\n",
           Rows.spread(memory["hev2"][:require]).first, Rows.spread(memory["socket"][:require]).first)
    puts "where the hev2 side's time goes: one process per pair doing each step in turn, ms median [min .. max]"
    printf("  %-52s %s\n", "interpreter start (spawn to first line)", ms(edges[:start]))
    STEPS.zip(steps).each { |(label, _), values| printf("  %-52s %s\n", label, ms(values)) }
    printf("  %-52s %s\n", "exit (last line to the parent's wait)", ms(edges[:exit]))
  end

  def main
    abort "BENCH_PAIRS=#{PAIRS}: at least 20 pairs" if PAIRS < 20
    abort "set HEV2_LIBRARY to the libhev2.so to measure (make bench-ruby-fresh does)" if ENV.fetch("HEV2_LIBRARY", "").empty?
    listener = Socket.new(:INET, :STREAM)
    listener.bind(Addrinfo.tcp("127.0.0.1", 0))
    listener.listen(4096)
    port = listener.local_address.ip_port.to_s
    codes = SIDES.transform_values { |code| code.gsub("@PORT@", port) }
    split = SPLIT.gsub("@PORT@", port).sub("@MAX_HANDLES@", default_max_handles)
    [*codes.values, split].each { |code| spawn(code) } # unmeasured: the page cache, the first mappings
    drain(listener)
    report(*measure(listener, codes, split))
  ensure
    listener&.close
  end
end

FreshProcess.main
