# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""systemctl for sandbox hosts (test infrastructure: the hosts have no systemd). Every host's
/usr/bin/systemctl runs it (a launcher the host's init writes); standard library only, run by the host's
/usr/bin/python3.

Unit files: ``<unit>`` in /etc/systemd/system, /run/systemd/system, /usr/lib/systemd/system (the first dir
that has it wins); drop-ins ``<unit>.d/*.conf`` from the same dirs (for one file name the first dir wins),
applied in file-name order. Honoured keys: [Unit] Description; [Service] Type (simple, exec, notify are
treated alike; oneshot), ExecStartPre, ExecStart, ExecReload (an empty assignment resets the list),
Environment, EnvironmentFile (a leading ``-`` makes it optional), WorkingDirectory, Restart (no, always,
on-success, on-failure, on-abnormal), RestartSec, RemainAfterExit, TimeoutStopSec, KillSignal; [Install]
WantedBy, RequiredBy; DefaultEnvironment from /etc/systemd/system.conf and system.conf.d/*.conf.
Command lines follow systemd: ``$VAR`` as a whole word splits at whitespace, ``${VAR}`` stays one piece,
``$$`` and ``%%`` are literal, specifiers %n %N %p %i %H.

A started service gets a supervisor: this file run as ``systemctl.py --kcpsim-supervise <unit> <fd>``. It runs
the commands in a new session, restarts the service as Restart= says, stops it (KillSignal to the process
group, SIGKILL after TimeoutStopSec) when it receives SIGTERM, and keeps the runtime state in
/run/kcpsim-units/<unit>.json. Service output is appended to /var/log/kcpsim-units/<unit>.log.

Verbs: start, stop, restart, reload, try-restart, reload-or-restart, kill, enable [--now], disable [--now],
mask, unmask, is-active, is-enabled, is-failed, reset-failed, status, show, list-units, list-unit-files,
daemon-reload, daemon-reexec; ``start <name>.target`` starts the services /etc/systemd/system/<name>.target.wants
holds (what the host's boot does with multi-user.target).
"""

import contextlib
import fcntl
import fnmatch
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system")
CONFIG_DIR = UNIT_DIRS[0]
MANAGER_CONFIG = ("/etc/systemd/system.conf", "/etc/systemd/system.conf.d")
RUN_DIR = "/run/kcpsim-units"
LOG_DIR = "/var/log/kcpsim-units"
SERVICE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LIST_KEYS = ("ExecStartPre", "ExecStart", "ExecReload", "Environment", "EnvironmentFile", "WantedBy", "RequiredBy")
# systemd waits 90 s by default; the sandbox's services stop promptly, and a hung one should not stall a test.
DEFAULT_TIMEOUT_STOP = 10.0
DEFAULT_TIMEOUT_START = 90.0
CLEAN_SIGNALS = (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)
SUPERVISOR_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
RUNNING_STATES = ("active", "activating", "deactivating", "reloading")


class UnitError(Exception):
    """A unit file that cannot be used, or a command it names that cannot be run."""


# --- reading unit files (pure parsing below, file access in load_unit) ----------------------------------

def parse_unit_text(text):
    """[(section, key, value)] in file order; comments, blank lines and line continuations handled."""
    entries, section, pending = [], None, ""
    for raw in text.splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line and section:
            key, value = line.split("=", 1)
            entries.append((section, key.strip(), value.strip()))
    return entries


def merge_settings(entry_lists):
    """Settings of a unit from its fragment then its drop-ins: list keys accumulate (an empty value
    resets them), other keys take the last value. Keys are ``Section.Key``."""
    settings = {}
    for entries in entry_lists:
        for section, key, value in entries:
            name = "%s.%s" % (section, key)
            if key in LIST_KEYS:
                settings[name] = settings.get(name, []) + [value] if value else []
            else:
                settings[name] = value
    return settings


def parse_environment_assignments(values):
    """Environment= values ("A=1" B=2 …) into a dict, later assignments winning."""
    env = {}
    for value in values:
        for word, _quoted in tokenize(value):
            if "=" in word:
                key, val = word.split("=", 1)
                env[key] = val
    return env


def parse_environment_file(text):
    """KEY=VALUE lines as systemd reads them: # and ; comments, optional single or double quotes."""
    env = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
            if raw.strip().split("=", 1)[1].strip()[0] == '"':
                value = re.sub(r'\\(["\\$`])', r"\1", value)
        env[key] = value
    return env


def tokenize(line):
    """Words of a command line as (text, quoted): quotes and backslashes as systemd reads them."""
    words, current, quoted, quote, i = [], None, False, None, 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == quote:
                quote = None
            elif char == "\\" and quote == '"' and i + 1 < len(line):
                i += 1
                current.append(line[i])
            else:
                current.append(char)
        elif char in " \t":
            if current is not None:
                words.append(("".join(current), quoted))
                current, quoted = None, False
        else:
            if current is None:
                current = []
            if char in "\"'":
                quote, quoted = char, True
            elif char == "\\" and i + 1 < len(line):
                i += 1
                current.append(line[i])
            else:
                current.append(char)
        i += 1
    if quote:
        raise UnitError("unbalanced quotes in %r" % line)
    if current is not None:
        words.append(("".join(current), quoted))
    return words


_WHOLE_VAR = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")
_BRACED_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SPECIFIER = re.compile(r"%(.)")
_DOLLAR = "\0dollar\0"


def expand_specifiers(line, unit_name, host_name):
    prefix = unit_name.rpartition(".")[0]
    base, instance = prefix.partition("@")[::2]
    values = {"%": "%", "n": unit_name, "N": prefix, "p": base, "i": instance, "H": host_name}
    return _SPECIFIER.sub(lambda m: values.get(m.group(1), m.group(0)), line)


def expand_command(line, env):
    """(ignore_failure, argv) for one Exec line: prefix flags stripped, variables substituted."""
    ignore_failure = False
    while line and line[0] in "-@:+!":
        ignore_failure = ignore_failure or line[0] == "-"
        line = line[1:]
    argv = []
    for text, quoted in tokenize(line.replace("$$", _DOLLAR)):
        whole = _WHOLE_VAR.match(text)
        if whole and not quoted:
            argv.extend(env.get(whole.group(1), "").split())
        else:
            argv.append(_BRACED_VAR.sub(lambda m: env.get(m.group(1), ""), text))
    if not argv:
        raise UnitError("empty command line")
    return ignore_failure, [arg.replace(_DOLLAR, "$") for arg in argv]


def parse_timespan(value, default):
    """systemd time spans: ``90``, ``1s``, ``500ms``, ``1min 30s``; seconds as float."""
    if not value:
        return default
    units = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 0.001, "msec": 0.001, "us": 1e-6, "m": 60.0, "min": 60.0,
             "h": 3600.0, "hr": 3600.0}
    if value == "infinity":
        return None
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)\s*([a-z]*)", value):
        if unit not in units:
            raise UnitError("invalid time span %r" % value)
        total += float(number) * units[unit]
    return total


def should_restart(policy, code, status):
    """Restart= applied to how the main process ended (``code`` exited/killed, ``status`` exit code or signal)."""
    clean = is_clean(code, status)
    return {"always": True, "on-success": clean, "on-failure": not clean,
            "on-abnormal": code == "killed" and not clean}.get(policy, False)


# --- units on disk --------------------------------------------------------------------------------------

def normalize(name):
    return name if re.search(r"\.(service|target|socket|timer|mount|path)$", name) else name + ".service"


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


class Unit:
    def __init__(self, name):
        self.name = name
        self.fragment = next((os.path.join(d, name) for d in UNIT_DIRS if os.path.lexists(os.path.join(d, name))),
                             None)
        self.masked = bool(self.fragment) and os.path.realpath(self.fragment) == "/dev/null"
        dropins = {}
        for directory in UNIT_DIRS:
            conf_dir = os.path.join(directory, name + ".d")
            if os.path.isdir(conf_dir):
                for entry in os.listdir(conf_dir):
                    if entry.endswith(".conf"):
                        dropins.setdefault(entry, os.path.join(conf_dir, entry))
        self.dropins = [dropins[key] for key in sorted(dropins)]
        texts = [] if not self.fragment or self.masked else [_read(self.fragment)]
        texts += [_read(path) for path in self.dropins]
        self.settings = merge_settings(parse_unit_text(text) for text in texts)

    @property
    def found(self):
        return self.fragment is not None

    def get(self, key, default=None):
        return self.settings.get(key, default)

    @property
    def install_targets(self):
        return self.get("Install.WantedBy", []) + self.get("Install.RequiredBy", [])

    def wants_links(self):
        """Enablement symlinks of this unit under /etc/systemd/system/*.{wants,requires}."""
        links = []
        if os.path.isdir(CONFIG_DIR):
            for entry in os.listdir(CONFIG_DIR):
                link = os.path.join(CONFIG_DIR, entry, self.name)
                if entry.endswith((".wants", ".requires")) and os.path.lexists(link):
                    links.append(link)
        return sorted(links)

    def file_state(self):
        if not self.found:
            return None
        if self.masked:
            return "masked"
        if self.wants_links():
            return "enabled"
        return "disabled" if self.install_targets else "static"

    def environment(self):
        """The service's environment: systemd's base, DefaultEnvironment, Environment=, EnvironmentFile=."""
        env = {"PATH": SERVICE_PATH, "LANG": "C.UTF-8"}
        env.update(manager_default_environment())
        env.update(parse_environment_assignments(self.get("Service.Environment", [])))
        for spec in self.get("Service.EnvironmentFile", []):
            optional = spec.startswith("-")
            path = spec.lstrip("-")
            try:
                env.update(parse_environment_file(_read(path)))
            except OSError as exc:
                if not optional:
                    raise UnitError("failed to load environment file %s: %s" % (path, exc.strerror))
        return env

    def command(self, line, env):
        ignore_failure, argv = expand_command(expand_specifiers(line, self.name, socket.gethostname()), env)
        if not argv[0].startswith("/"):
            found = [os.path.join(d, argv[0]) for d in SERVICE_PATH.split(":")
                     if os.access(os.path.join(d, argv[0]), os.X_OK)]
            if not found:
                raise UnitError("executable %r not found in %s" % (argv[0], SERVICE_PATH))
            argv[0] = found[0]
        return ignore_failure, argv


def manager_default_environment():
    main, conf_dir = MANAGER_CONFIG
    paths = [main] + (sorted(os.path.join(conf_dir, f) for f in os.listdir(conf_dir) if f.endswith(".conf"))
                      if os.path.isdir(conf_dir) else [])
    values = []
    for path in paths:
        with contextlib.suppress(OSError):
            values += [v for s, k, v in parse_unit_text(_read(path)) if s == "Manager" and k == "DefaultEnvironment"]
    return parse_environment_assignments(values)


# --- runtime state ----------------------------------------------------------------------------------------

def _state_path(name):
    return os.path.join(RUN_DIR, name + ".json")


def _proc_start(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in "ZX" else fields[19]


def read_state(name):
    """The unit's runtime state; a supervisor that died unannounced (killed) shows as failed."""
    try:
        with open(_state_path(name)) as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        return {"active_state": "inactive", "sub_state": "dead", "main_pid": 0, "result": "success"}
    supervisor = state.get("supervisor")
    if state["active_state"] in RUNNING_STATES and supervisor and _proc_start(supervisor["pid"]) != supervisor["start"]:
        state.update(active_state="failed", sub_state="failed", main_pid=0, result="signal")
    return state


def write_state(name, **fields):
    os.makedirs(RUN_DIR, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=RUN_DIR, prefix=".tmp-")
    with os.fdopen(fd, "w") as handle:
        json.dump(dict(fields, unit=name, updated=time.time()), handle)
    os.replace(tmp, _state_path(name))


@contextlib.contextmanager
def unit_lock(name):
    """One job at a time per unit (two `systemctl start` at once must not start two supervisors)."""
    os.makedirs(RUN_DIR, exist_ok=True)
    with open(os.path.join(RUN_DIR, name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


# --- the supervisor (one process per started service) -----------------------------------------------------

EXIT_EXEC = 203  # systemd's status for "the command could not be executed"


def is_clean(code, status):
    return (code == "exited" and status == 0) or (code == "killed" and status in CLEAN_SIGNALS)


class Supervisor:
    def __init__(self, unit, ready_fd):
        self.unit = unit
        self.ready_fd = ready_fd
        self.me = {"pid": os.getpid(), "start": _proc_start(os.getpid())}
        self.invocation = uuid.uuid4().hex
        self.restarts = 0
        self.stopping = False
        self.main = None
        self.exit = ("exited", 0)
        self.failure_ignored = False

    def report(self, message):
        """Tell the waiting `systemctl start` how the start went (once)."""
        if self.ready_fd is not None:
            os.write(self.ready_fd, (message + "\n").encode())
            os.close(self.ready_fd)
            self.ready_fd = None

    def record(self, active, sub, result="success"):
        running = self.main is not None and sub == "running"
        write_state(self.unit.name, supervisor=self.me if active in RUNNING_STATES else None, active_state=active,
                    sub_state=sub, result=result, main_pid=self.main.pid if running else 0,
                    n_restarts=self.restarts, invocation_id=self.invocation, exec_main_code=self.exit[0],
                    exec_main_status=self.exit[1], since=time.time())

    def spawn(self, argv, env):
        directory = self.unit.get("Service.WorkingDirectory", "/").lstrip("-") or "/"
        log = _log_fd(self.unit.name)
        try:
            return subprocess.Popen(argv, env=env, cwd=directory, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True, preexec_fn=_unblock_signals)
        except OSError as exc:
            raise UnitError("failed to execute %s: %s" % (argv[0], exc.strerror))
        finally:
            os.close(log)

    def wait(self, process, timeout=None):
        """Wait for ``process`` to end (True), or for a stop request or the timeout (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while process is None or process.poll() is None:
            if deadline is None:
                info = signal.sigwaitinfo(SUPERVISOR_SIGNALS)
            else:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                info = signal.sigtimedwait(SUPERVISOR_SIGNALS, left)
            if info is not None and info.si_signo != signal.SIGCHLD:
                self.stopping = True
                return False
        return True

    def terminate(self):
        """KillSignal to the service's process group, SIGKILL once TimeoutStopSec has passed."""
        if self.main is None or self.main.poll() is not None:
            return
        kill_signal = getattr(signal, self.unit.get("Service.KillSignal", "SIGTERM"), signal.SIGTERM)
        _killpg(self.main.pid, kill_signal)
        if not self.wait(self.main, parse_timespan(self.unit.get("Service.TimeoutStopSec"), DEFAULT_TIMEOUT_STOP)):
            _killpg(self.main.pid, signal.SIGKILL)
            self.main.wait()
        self.exit = _exit_of(self.main.returncode)

    def run_command(self, line, env, report_running=False):
        """Run one command line until it ends; 'ended', 'failed' (a failure that counts) or 'stopped'."""
        ignore_failure, argv = self.unit.command(line, env)
        self.main = self.spawn(argv, env)
        if report_running:
            self.record("active", "running")
            self.report("ok %d" % self.main.pid)
        if not self.wait(self.main):
            self.terminate()
            return "stopped"
        self.exit = _exit_of(self.main.returncode)
        self.failure_ignored = ignore_failure and self.exit[0] == "exited"
        return "ended" if self.failure_ignored or is_clean(*self.exit) or report_running else "failed"

    def activate(self):
        """One activation: 'ended' (the service ran and ended), 'done' (oneshot finished), 'failed', 'stopped'."""
        env = self.unit.environment()
        env["INVOCATION_ID"] = self.invocation
        lines = self.unit.get("Service.ExecStart", [])
        if not lines:
            raise UnitError("%s has no ExecStart= setting" % self.unit.name)
        oneshot = self.unit.get("Service.Type", "simple") == "oneshot"
        for line in self.unit.get("Service.ExecStartPre", []) + (lines if oneshot else []):
            outcome = self.run_command(line, env)
            if outcome != "ended":
                return outcome
        return "done" if oneshot else self.run_command(lines[0], env, report_running=True)

    def run(self):
        signal.pthread_sigmask(signal.SIG_BLOCK, SUPERVISOR_SIGNALS)
        self.record("activating", "start")
        while True:
            try:
                outcome = self.activate()
            except UnitError as exc:
                sys.stderr.write("%s: %s\n" % (self.unit.name, exc))
                self.exit, outcome = ("exited", EXIT_EXEC), "failed"
            if outcome == "stopped":
                self.record("inactive", "dead")
                self.report("fail stopped while starting")
                return 0
            if outcome == "done":
                remain = self.unit.get("Service.RemainAfterExit", "no") in ("yes", "true", "1", "on")
                self.record("active" if remain else "inactive", "exited" if remain else "dead")
                self.report("ok 0")
                return 0
            if outcome == "failed":
                self.report("fail %s %s" % self.exit)
            code, status = ("exited", 0) if self.failure_ignored else self.exit
            if not should_restart(self.unit.get("Service.Restart", "no"), code, status):
                clean = is_clean(code, status)
                self.record("inactive" if clean else "failed", "dead" if clean else "failed",
                            "success" if clean else ("signal" if code == "killed" else "exit-code"))
                return 0
            self.record("activating", "auto-restart")
            if not self.wait(None, parse_timespan(self.unit.get("Service.RestartSec"), 0.1)) and self.stopping:
                self.record("inactive", "dead")
                return 0
            self.restarts += 1
            self.unit = Unit(self.unit.name)


def _unblock_signals():
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _killpg(pgid, signum):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _exit_of(returncode):
    return ("killed", -returncode) if returncode < 0 else ("exited", returncode)


# --- verbs ----------------------------------------------------------------------------------------------------

def fail(message, code=1):
    sys.stderr.write(message + "\n")
    return code


def start(name, wait=True):
    if name.endswith(".target"):
        return start_target(name)
    unit = Unit(name)
    if not unit.found:
        return fail("Failed to start %s: Unit %s not found." % (name, name), 5)
    if unit.masked:
        return fail("Failed to start %s: Unit %s is masked." % (name, name))
    with unit_lock(name):
        if read_state(name)["active_state"] in RUNNING_STATES:
            return 0
        read_fd, write_fd = os.pipe()
        log = _log_fd(name)
        subprocess.Popen([sys.executable, os.path.realpath(__file__), "--kcpsim-supervise", name, str(write_fd)],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(write_fd,),
                         start_new_session=True)
        os.close(write_fd)
        os.close(log)
        if not wait:
            os.close(read_fd)
            return 0
        answer = _read_line(read_fd, DEFAULT_TIMEOUT_START)
    if not answer.startswith("ok"):
        return fail("Job for %s failed because the control process exited with error code.\n"
                    "See \"systemctl status %s\" for details. (%s)" % (name, name, answer[5:] or "no answer"))
    return 0


def start_target(name):
    wants = os.path.join(CONFIG_DIR, name + ".wants")
    units = sorted(u for u in os.listdir(wants) if u.endswith(".service")) if os.path.isdir(wants) else []
    results = [start(unit) for unit in units]
    return 1 if any(results) else 0


def _log_fd(name):
    os.makedirs(LOG_DIR, exist_ok=True)
    return os.open(os.path.join(LOG_DIR, name + ".log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)


def _read_line(fd, timeout):
    data, deadline = b"", time.monotonic() + timeout
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                return "fail no answer from the supervisor within %.0fs" % timeout
            chunk = pipe.read(256)
            if not chunk:
                break
            data += chunk
    return data.decode().strip() or "fail the supervisor exited"


def stop(name):
    unit = Unit(name)
    with unit_lock(name):
        state = read_state(name)
        if not unit.found and state["active_state"] == "inactive":
            return fail("Failed to stop %s: Unit %s not loaded." % (name, name), 5)
        supervisor = state.get("supervisor")
        if supervisor and _proc_start(supervisor["pid"]) == supervisor["start"]:
            os.kill(supervisor["pid"], signal.SIGTERM)
            timeout = (parse_timespan(unit.get("Service.TimeoutStopSec"), DEFAULT_TIMEOUT_STOP) or 0) + 5
            deadline = time.monotonic() + timeout
            while _proc_start(supervisor["pid"]) == supervisor["start"]:
                if time.monotonic() > deadline:
                    return fail("Failed to stop %s: its supervisor did not exit within %.0fs" % (name, timeout))
                time.sleep(0.01)
        elif state.get("main_pid"):
            # The supervisor was killed from outside; its service may still run.
            _killpg(state["main_pid"], signal.SIGKILL)
        if read_state(name)["active_state"] in RUNNING_STATES:
            # A oneshot with RemainAfterExit (no supervisor left), or a supervisor that died unannounced.
            write_state(name, supervisor=None, active_state="inactive", sub_state="dead", result="success",
                        main_pid=0, n_restarts=state.get("n_restarts", 0))
    return 0


def restart(name):
    unit = Unit(name)
    if not unit.found:
        return fail("Failed to restart %s: Unit %s not found." % (name, name), 5)
    return stop(name) or start(name)


def reload(name, or_restart=False):
    unit = Unit(name)
    state = read_state(name)
    active = state["active_state"] == "active"
    lines = unit.get("Service.ExecReload", [])
    if or_restart and (not lines or not active):
        return restart(name)
    if not unit.found:
        return fail("Failed to reload %s: Unit %s not found." % (name, name), 5)
    if not lines:
        return fail("Failed to reload %s: Job type reload is not applicable for unit %s." % (name, name))
    if not active:
        return fail("%s is not active, cannot reload." % name)
    env = dict(unit.environment(), MAINPID=str(state.get("main_pid", 0)))
    for line in lines:
        ignore_failure, argv = unit.command(line, env)
        code = subprocess.call(argv, env=env, stdin=subprocess.DEVNULL, stdout=_log_fd(name), stderr=_log_fd(name))
        if code and not ignore_failure:
            return fail("Job for %s failed (reload command exited %d)." % (name, code))
    return 0


def kill(name, signum, whom):
    state = read_state(name)
    if state.get("main_pid"):
        if whom == "main":
            with contextlib.suppress(ProcessLookupError):
                os.kill(state["main_pid"], signum)
        else:
            _killpg(state["main_pid"], signum)
    return 0


def enable(name, now):
    unit = Unit(name)
    if not unit.found:
        return fail("Failed to enable unit: Unit file %s does not exist." % name)
    if unit.masked:
        return fail("Failed to enable unit: Unit file %s is masked." % name)
    if not unit.install_targets:
        sys.stderr.write("The unit files have no installation config (WantedBy=, RequiredBy=, Also=, Alias= "
                         "settings in the [Install] section). Nothing to enable.\n")
    for target in unit.install_targets:
        kind = ".wants" if target in unit.get("Install.WantedBy", []) else ".requires"
        link_dir = os.path.join(CONFIG_DIR, target + kind)
        link = os.path.join(link_dir, name)
        if not os.path.lexists(link):
            os.makedirs(link_dir, exist_ok=True)
            os.symlink(unit.fragment, link)
            sys.stderr.write("Created symlink %s \u2192 %s.\n" % (link, unit.fragment))
    return start(name) if now else 0


def disable(name, now):
    for link in Unit(name).wants_links():
        os.unlink(link)
        sys.stderr.write("Removed \"%s\".\n" % link)
    return stop(name) if now else 0


def mask(name):
    path = os.path.join(CONFIG_DIR, name)
    if os.path.lexists(path) and os.path.realpath(path) != "/dev/null":
        return fail("Failed to mask unit: File %s already exists." % path)
    if not os.path.lexists(path):
        os.symlink("/dev/null", path)
        sys.stderr.write("Created symlink %s \u2192 /dev/null.\n" % path)
    return 0


def unmask(name):
    path = os.path.join(CONFIG_DIR, name)
    if os.path.islink(path) and os.path.realpath(path) == "/dev/null":
        os.unlink(path)
        sys.stderr.write("Removed \"%s\".\n" % path)
    return 0


def properties(name):
    unit = Unit(name)
    state = read_state(name)
    load_state = "masked" if unit.masked else ("loaded" if unit.found else "not-found")
    exec_start = [expand_command(line, {})[1] for line in unit.get("Service.ExecStart", [])]
    since = time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(state["since"])) if state.get("since") else ""
    return {
        "Type": unit.get("Service.Type", "simple"),
        "Restart": unit.get("Service.Restart", "no"),
        "MainPID": state.get("main_pid", 0),
        "ExecMainPID": state.get("main_pid", 0),
        "ExecMainCode": {"exited": 1, "killed": 2}.get(state.get("exec_main_code"), 0),
        "ExecMainStatus": state.get("exec_main_status", 0),
        "NRestarts": state.get("n_restarts", 0),
        "ExecStart": " ".join("{ path=%s ; argv[]=%s ; ignore_errors=no }" % (argv[0], " ".join(argv))
                              for argv in exec_start if argv),
        "Result": state.get("result", "success"),
        "InvocationID": state.get("invocation_id", ""),
        "Id": name,
        "Names": name,
        "Description": unit.get("Unit.Description", name),
        "LoadState": load_state,
        "ActiveState": state["active_state"],
        "SubState": state["sub_state"],
        "FragmentPath": unit.fragment or "",
        "DropInPaths": " ".join(unit.dropins),
        "UnitFileState": unit.file_state() or "",
        "ActiveEnterTimestamp": since if state["active_state"] == "active" else "",
        "StateChangeTimestamp": since,
        "WantedBy": " ".join(unit.get("Install.WantedBy", [])),
        "CanReload": "yes" if unit.get("Service.ExecReload") else "no",
    }


def show(names, wanted, value_only):
    blocks = []
    for name in names:
        props = properties(name)
        keys = wanted or list(props)
        lines = []
        for key in keys:
            if key in props:
                lines.append(str(props[key]) if value_only else "%s=%s" % (key, props[key]))
        blocks.append("\n".join(lines))
    print("\n\n".join(blocks))
    return 0


def status(names):
    code = 0
    for name in names:
        unit = Unit(name)
        if not unit.found:
            sys.stderr.write("Unit %s could not be found.\n" % name)
            code = max(code, 4)
            continue
        props = properties(name)
        print("\u25cf %s - %s" % (name, props["Description"]))
        print("     Loaded: %s (%s; %s)" % (props["LoadState"], unit.fragment, props["UnitFileState"]))
        if unit.dropins:
            print("    Drop-In: %s" % "\n             ".join(unit.dropins))
        print("     Active: %s (%s)%s" % (props["ActiveState"], props["SubState"],
                                          " since " + props["StateChangeTimestamp"] if props["StateChangeTimestamp"]
                                          else ""))
        if props["MainPID"]:
            print("   Main PID: %s" % props["MainPID"])
        with contextlib.suppress(OSError):
            tail = _read(os.path.join(LOG_DIR, name + ".log")).splitlines()[-10:]
            if tail:
                print("\n" + "\n".join(tail))
        if props["ActiveState"] != "active":
            code = max(code, 3)
    return code


def all_unit_names(kind=None):
    names = set()
    for directory in UNIT_DIRS:
        if os.path.isdir(directory):
            names.update(n for n in os.listdir(directory) if not os.path.isdir(os.path.join(directory, n)))
    if os.path.isdir(RUN_DIR):
        names.update(n[:-5] for n in os.listdir(RUN_DIR) if n.endswith(".json"))
    return sorted(n for n in names if "." in n and (kind is None or n.endswith("." + kind)))


def list_units(patterns, kind, show_all, legend):
    rows = []
    for name in all_unit_names(kind):
        if patterns and not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        props = properties(name)
        if show_all or props["ActiveState"] != "inactive":
            rows.append(" ".join([name, props["LoadState"], props["ActiveState"], props["SubState"],
                                  props["Description"]]))
    if legend:
        print("UNIT LOAD ACTIVE SUB DESCRIPTION")
    print("\n".join(rows))
    if legend:
        print("\n%d loaded units listed." % len(rows))
    return 0


def list_unit_files(patterns, kind, legend):
    rows = []
    for name in all_unit_names(kind):
        if patterns and not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        file_state = Unit(name).file_state()
        if file_state:
            rows.append("%s %s %s" % (name, file_state, "enabled"))
    if legend:
        print("UNIT FILE STATE VENDOR PRESET")
    print("\n".join(rows))
    if legend:
        print("\n%d unit files listed." % len(rows))
    return 0 if rows or not patterns else 1


# --- command line ---------------------------------------------------------------------------------------------

FLAGS = {"--now", "--no-block", "--no-pager", "--no-legend", "--plain", "--all", "-a", "--value", "--full", "-l",
         "--quiet", "-q", "--system", "--force", "-f", "--no-ask-password", "--no-reload", "--runtime"}
VALUED = {"-p": "property", "--property": "property", "-s": "signal", "--signal": "signal", "-t": "type",
          "--type": "type", "--kill-whom": "kill_whom", "--kill-who": "kill_whom", "--state": "state"}


def parse_args(argv):
    flags, values, words = set(), {"property": []}, []
    args = iter(argv)
    for arg in args:
        name, eq, inline = arg.partition("=")
        if name in VALUED:
            value = inline if eq else next(args, "")
            if VALUED[name] == "property":
                values["property"] += [p for p in value.split(",") if p]
            else:
                values[VALUED[name]] = value
        elif arg in FLAGS:
            flags.add(arg)
        elif arg.startswith("-") and arg != "-":
            raise UnitError("unrecognized option '%s'" % arg)
        else:
            words.append(arg)
    return flags, values, words


def main(argv):
    if argv[:1] == ["--kcpsim-supervise"]:
        return Supervisor(Unit(argv[1]), int(argv[2])).run()
    # Like the real one: quietly end when the reader of our output goes away (`systemctl … | head`).
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        flags, values, words = parse_args(argv)
    except UnitError as exc:
        return fail("systemctl: %s" % exc)
    verb, names = (words[0], [normalize(n) for n in words[1:]]) if words else ("list-units", [])
    quiet = "-q" in flags or "--quiet" in flags
    legend = not ({"--no-legend", "--plain"} & flags)
    kind = values.get("type")
    try:
        if verb in ("daemon-reload", "daemon-reexec"):
            return 0
        if verb == "list-units":
            return list_units(words[1:], kind, "--all" in flags or "-a" in flags, legend)
        if verb == "list-unit-files":
            return list_unit_files(words[1:], kind, legend)
        if not names:
            return fail("Too few arguments.")
        if verb == "show":
            return show(names, values["property"], "--value" in flags)
        if verb == "status":
            return status(names)
        if verb == "is-active":
            states = [read_state(n)["active_state"] for n in names]
            if not quiet:
                print("\n".join(states))
            return 0 if any(s == "active" for s in states) else 3
        if verb == "is-failed":
            states = [read_state(n)["active_state"] for n in names]
            if not quiet:
                print("\n".join(states))
            return 0 if any(s == "failed" for s in states) else 1
        if verb == "is-enabled":
            file_states = [Unit(n).file_state() for n in names]
            for name, file_state in zip(names, file_states):
                if file_state is None:
                    sys.stderr.write("Failed to get unit file state for %s: No such file or directory\n" % name)
                elif not quiet:
                    print(file_state)
            return 0 if any(s in ("enabled", "static", "alias", "indirect") for s in file_states) else 1
        if verb == "reset-failed":
            for name in names:
                if read_state(name)["active_state"] == "failed":
                    write_state(name, supervisor=None, active_state="inactive", sub_state="dead", result="success",
                                main_pid=0)
            return 0
        if verb == "kill":
            spec = values.get("signal", "TERM").upper()
            signum = int(spec) if spec.isdigit() else getattr(signal, "SIG" + spec.replace("SIG", "", 1), None)
            if signum is None:
                return fail("Failed to parse signal string %s." % values.get("signal"))
            return max(kill(n, signum, values.get("kill_whom", "all")) for n in names)
        verbs = {
            "start": lambda n: start(n, wait="--no-block" not in flags),
            "stop": stop,
            "restart": restart,
            "try-restart": lambda n: restart(n) if read_state(n)["active_state"] in RUNNING_STATES else 0,
            "reload": reload,
            "reload-or-restart": lambda n: reload(n, or_restart=True),
            "try-reload-or-restart": lambda n: reload(n, or_restart=True)
            if read_state(n)["active_state"] in RUNNING_STATES else 0,
            "force-reload": lambda n: reload(n, or_restart=True),
            "enable": lambda n: enable(n, "--now" in flags),
            "disable": lambda n: disable(n, "--now" in flags),
            "mask": mask,
            "unmask": unmask,
        }
        if verb not in verbs:
            return fail("Unknown command verb %s (the sandbox's systemctl stand-in does not implement it)." % verb)
        return max(verbs[verb](name) for name in names)
    except UnitError as exc:
        return fail("%s: %s" % (verb, exc))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
