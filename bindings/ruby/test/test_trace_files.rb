# frozen_string_literal: true

require_relative "helper"
require "json"
require "tmpdir"

# trace_files: the race written by the library (hev2_write_trace) as a
# picture, qlog and a Chrome trace, for a won and a failed race; bad values
# refused before anything starts. The files' content is checked in core's
# tests; here, that the gem reaches the one renderer and its errors.
class TestTraceFiles < Minitest::Test
  include Helper

  def test_won_race_written_in_every_format
    Dir.mktmpdir do |dir|
      files = { svg: File.join(dir, "race.svg"), qlog: File.join(dir, "race.qlog"), chrome: File.join(dir, "race.json") }
      closing(Loopback.listener("127.0.0.1")) do |srv|
        Hev2.tcp("127.0.0.1", Loopback.port_of(srv), trace_files: files, &:close)
      end
      svg = File.read(files[:svg])
      assert svg.start_with?('<svg xmlns="http://www.w3.org/2000/svg"')
      assert_includes svg, 'data-outcome="won"'
      records = File.read(files[:qlog]).split("\x1e").reject(&:empty?).map { |r| JSON.parse(r) }
      assert_equal "urn:ietf:params:qlog:file:sequential", records[0]["file_schema"]
      names = records.drop(1).map { |r| r["name"] }
      assert_includes names, "hev3:connection_selected"
      assert_equal "hev3:metrics", names.last
      chrome = JSON.parse(File.read(files[:chrome]))
      assert_equal %w[B E], chrome["traceEvents"].select { |e| e["name"] == "attempt" }.map { |e| e["ph"] }
    end
  end

  def test_failed_race_written_too
    Dir.mktmpdir do |dir|
      path = File.join(dir, "refused.qlog")
      closing(Loopback.refusing("127.0.0.1")) do |r|
        assert_raises(Errno::ECONNREFUSED) { Hev2.tcp("127.0.0.1", Loopback.port_of(r), trace_files: { "qlog" => path }) }
      end
      names = File.read(path).split("\x1e").drop(2).map { |rec| JSON.parse(rec)["name"] }
      assert_includes names, "hev3:connection_aborted"
    end
  end

  def test_unwritable_file_raises_and_leaks_nothing
    warm_up
    closing(Loopback.listener("127.0.0.1")) do |srv|
      fds, handles = Loopback.open_fds, Hev2.stats[:handles_live]
      e = assert_raises(Errno::ENOENT) do
        Hev2.tcp("127.0.0.1", Loopback.port_of(srv), trace_files: { svg: "/nonexistent-hev2-dir/race.svg" })
      end
      assert_includes e.message, "hev2_write_trace: open"
      assert_nothing_left(fds, handles) # the won socket closed, the handle released
    end
  end

  def test_bad_trace_files_refused
    { { png: "x.png" } => ArgumentError, { svg: "" } => ArgumentError, [:svg] => TypeError,
      { qlog: 5 } => TypeError }.each do |value, exc|
      assert_raises(exc, value.inspect) { Hev2.tcp("127.0.0.1", 9, trace_files: value) }
    end
  end
end
