#!/usr/bin/python3
"""The host side of a virtio-mem device for a test guest (tests/vm/run-vm).

A host resizes a virtio-mem device by setting its requested-size; the guest
driver then plugs or unplugs memory and reports the plugged size.  run-vm
starts this agent beside QEMU with the device's QMP socket, so a test in
the guest can play the host: it writes one request line to the file
"virtio-mem-request" on the run-vm share (/mnt/regionpm-vm in the guest),
and the agent answers in "virtio-mem-reply":

    get                    ->  ok size=PLUGGED requested=REQUESTED
    set BYTES              ->  ok size=PLUGGED requested=BYTES
    (anything else, or a QMP error)  ->  error MESSAGE

Sizes are in bytes.  The request file is removed once it is read; the
reply is written under another name and renamed, so the guest never reads
half a reply.  run-vm stops the agent when QEMU has exited.

usage: virtio-mem-agent.py QMP_SOCKET SHARE_DIR DEVICE_ID
"""
import json
import os
import socket
import sys
import time


class QMP:
    def __init__(self, path, wait_s=60):
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.rfile = self.sock.makefile("r", encoding="utf-8")
        self.read()  # the greeting
        self.call("qmp_capabilities")

    def read(self):
        line = self.rfile.readline()
        if not line:
            raise EOFError("QEMU closed the QMP socket")
        return json.loads(line)

    def call(self, cmd, **args):
        msg = {"execute": cmd}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self.read()
            if "event" in reply:
                continue
            if "error" in reply:
                raise RuntimeError(reply["error"].get("desc", str(reply["error"])))
            return reply.get("return")


def answer(qmp, dev, line):
    words = line.split()
    path = "/machine/peripheral/" + dev
    if words[:1] == ["set"] and len(words) == 2 and words[1].isdigit():
        qmp.call("qom-set", path=path, property="requested-size", value=int(words[1]))
    elif words != ["get"]:
        return "error unknown request: " + line.strip()
    size = qmp.call("qom-get", path=path, property="size")
    requested = qmp.call("qom-get", path=path, property="requested-size")
    return "ok size=%d requested=%d" % (size, requested)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: virtio-mem-agent.py QMP_SOCKET SHARE_DIR DEVICE_ID")
    sock_path, share, dev = sys.argv[1:]
    request = os.path.join(share, "virtio-mem-request")
    reply = os.path.join(share, "virtio-mem-reply")
    try:
        qmp = QMP(sock_path)
    except OSError as e:
        sys.exit("virtio-mem-agent: cannot connect to %s: %s" % (sock_path, e))
    while True:
        try:
            with open(request, encoding="utf-8") as f:
                line = f.read()
            os.unlink(request)
        except FileNotFoundError:
            time.sleep(0.2)
            continue
        try:
            text = answer(qmp, dev, line)
        except EOFError:
            return
        except (RuntimeError, OSError, ValueError) as e:
            text = "error " + str(e)
        with open(reply + ".tmp", "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.rename(reply + ".tmp", reply)


if __name__ == "__main__":
    main()
