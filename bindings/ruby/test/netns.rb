# frozen_string_literal: true

require "fileutils"

# A network namespace of the gem's tests: only a loopback interface, its
# own resolv.conf (a DNS server the test runs on 127.0.0.1:53) and hosts
# file. Names resolved in it never reach this machine's resolver.
class TestNetns
  attr_reader :name

  def self.usable?
    Process.uid.zero? && system("ip", "netns", "list", out: File::NULL, err: File::NULL)
  end

  # extra_hosts: lines appended to the namespace's hosts file.
  def initialize(extra_hosts: "")
    @name = "hev2rb-#{Process.pid}"
    @etc = "/etc/netns/#{@name}"
    system("ip", "netns", "delete", @name, err: File::NULL) # a leftover of a killed run
    run("ip", "netns", "add", @name)
    run("ip", "-n", @name, "link", "set", "lo", "up")
    FileUtils.mkdir_p(@etc)
    File.write("#{@etc}/resolv.conf", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    File.write("#{@etc}/hosts", "127.0.0.1 localhost\n::1 localhost\n#{extra_hosts}")
  end

  # argv run inside the namespace (ip netns exec bind-mounts the files).
  def command(*argv)
    ["ip", "netns", "exec", @name, *argv]
  end

  def close
    system("ip", "netns", "delete", @name)
    FileUtils.rm_rf(@etc)
  end

  private

  def run(*argv)
    system(*argv) or raise "#{argv.join(" ")} failed"
  end
end
