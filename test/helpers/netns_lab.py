"""Test-only: several "hosts" on one machine as Linux network namespaces on one virtual switch.

``NetnsLab(["robots", "store"])`` makes, with iproute2, one network namespace per host plus one
holding a bridge (the switch); each host is joined to it by a veth pair and gets ``10.R.S.<i>/24``
(a subnet unique to this lab), ``lo`` up and a multicast route (unless ``multicast=False``), so DDS discovery (SPDP multicast) works
between hosts and nowhere else. Names carry the pid and a random token (parallel runs never clash);
``close()`` deletes every namespace (the veth pairs and the bridge go with them).

``prefix(host)`` is the command prefix that runs a process in that host (``ip netns exec NAME``);
``unplug(host)`` / ``plug(host)`` take its link down and up (the host disappears from the network and
comes back; its processes keep running).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess


def unavailable() -> str | None:
    """Why a lab cannot be built here (None: it can)."""
    if shutil.which("ip") is None:
        return "needs iproute2 ('ip' command) to create network namespaces"
    if os.geteuid() != 0:
        return "needs root to create network namespaces (ip netns add)"
    probe = f"rsfp{os.getpid() % 100000}{secrets.token_hex(2)}"
    res = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if res.returncode != 0:
        return f"cannot create a network namespace here: {res.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    res = subprocess.run(["ip", *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {res.stderr.strip()}")


def _bridge(netns: str, *args: str) -> None:
    res = subprocess.run(["ip", "netns", "exec", netns, "bridge", *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"bridge {' '.join(args)}: {res.stderr.strip()}")


class NetnsLab:
    def __init__(self, hosts: list[str], *, multicast: bool = True) -> None:
        self.multicast = multicast
        token = secrets.token_hex(2)
        self.tag = f"{os.getpid() % 10000}{token}"  # <= 8 characters: interface names stay under 16
        self.hosts = list(hosts)
        self.names = {h: f"rsf{self.tag}{h}" for h in hosts}
        self.switch = f"rsf{self.tag}sw"
        self._veth = {h: (f"v{self.tag}h{i}", f"v{self.tag}s{i}") for i, h in enumerate(hosts)}
        octets = secrets.randbelow(250) + 1, secrets.randbelow(250) + 1
        self.addresses = {h: f"10.{octets[0]}.{octets[1]}.{i + 1}" for i, h in enumerate(hosts)}
        self._made: list[str] = []
        try:
            self._build()
        except Exception:
            self.close()
            raise

    def _build(self) -> None:
        _ip("netns", "add", self.switch)
        self._made.append(self.switch)
        sw = ["-n", self.switch]
        _ip(*sw, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
        _ip(*sw, "link", "set", "br0", "up")
        _ip(*sw, "link", "set", "lo", "up")
        for h in self.hosts:
            ns = self.names[h]
            _ip("netns", "add", ns)
            self._made.append(ns)
            host_if, sw_if = self._veth[h]
            _ip("link", "add", host_if, "netns", ns, "type", "veth", "peer", "name", sw_if, "netns", self.switch)
            _ip(*sw, "link", "set", sw_if, "master", "br0")
            _ip(*sw, "link", "set", sw_if, "up")
            if not self.multicast:  # the switch drops multicast (Fast DDS sends it by interface, no route needed)
                _bridge(self.switch, "link", "set", "dev", sw_if, "mcast_flood", "off")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "addr", "add", f"{self.addresses[h]}/24", "dev", host_if)
            _ip("-n", ns, "link", "set", host_if, "up")
            if self.multicast:  # without the route, multicast sends fail: only unicast discovery works
                _ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", host_if)

    def prefix(self, host: str) -> list[str]:
        return ["ip", "netns", "exec", self.names[host]]

    def unplug(self, host: str) -> None:
        """The host's cable out: its switch port goes down (nothing in or out), its processes run on."""
        _ip("-n", self.switch, "link", "set", self._veth[host][1], "down")

    def plug(self, host: str) -> None:
        _ip("-n", self.switch, "link", "set", self._veth[host][1], "up")

    def close(self) -> None:
        for ns in reversed(self._made):
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        self._made.clear()
