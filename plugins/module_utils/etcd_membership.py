# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which etcd membership steps lead from the member list as it is to one member as declared (added as a learner or
a voter, promoted, given the lead, removed, the leadership handed on first when the leader leaves), and how the list
reads before and after them. Pure: the etcd_member module observes, asks the quorum guard before each step and
acts."""

from __future__ import annotations

import collections
from urllib.parse import urlsplit

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_leadership import among_members

# One change: ``action``, the member it acts on (hex id; None for an add) and the change_verdict arguments.
Step = collections.namedtuple("Step", "action member_id change")

# What the operator asked for, in the words of a refusal ("refused to <intent> member X").
INTENTS = {"add_learner": "add", "add": "add", "promote": "promote", "move_leader": "hand the leadership to"}


def find_member(members, name, peer_urls):
    """The member called ``name``, else the not-yet-started one holding one of ``peer_urls``; raise ValueError
    when those peer URLs belong to a member with another name. An empty ``name`` (the plan's for a member never
    started) names no member: the peer URLs say which."""
    for member in members:
        if name and member["name"] == name:
            return member
    for member in members:
        if set(member["peer_urls"]) & set(peer_urls or []):
            if member["name"]:
                raise ValueError("peer_urls: %s belong to member %s, not %s" % (", ".join(member["peer_urls"]), member["name"], name))
            return member
    return None


def _hosts(urls):
    return {urlsplit(url).hostname for url in urls or []}


def _label(member):
    return member["name"] or "%s (added, not started yet)" % member["id"]


def successor(members, leaving, candidate=None):
    """Who takes the lead from the leaving leader: the member named ``candidate`` (the plan's choice), else the
    one ``etcd_leadership`` picks; the guard refuses a candidate that cannot lead."""
    if candidate is None:
        heir_id = among_members(members, leaving["id"])
        return next((m for m in members if m["id"] == heir_id), None)
    if candidate == leaving["name"]:
        raise ValueError("leader_candidate: %s is the member being removed" % candidate)
    heir = next((m for m in members if m["name"] == candidate), None)
    if heir is None:
        raise ValueError("leader_candidate: no member is named %s" % candidate)
    return heir


def plan(members, name, peer_urls, state, learner, leader, leader_candidate=None):
    """The steps from the member's current state to the declared one (empty = nothing to do), and warnings
    for what was asked but means nothing here. Raises ValueError for requests that cannot be met."""
    member = find_member(members, name, peer_urls)
    if state == "absent":
        if member is None:
            unstarted = [m for m in members if not m["name"]]
            if unstarted and not peer_urls:
                raise ValueError(
                    "name: no member is named %s, but %s added and never started, with no name yet: give its "
                    "peer_urls to remove it" % (name, ", ".join("%s (peer URLs %s)" % (m["id"], ", ".join(m["peer_urls"])) for m in unstarted))
                )
            named = sorted(m["name"] for m in members if m["name"])
            return [], ["no member is named %s (the members are %s): nothing to remove" % (name, ", ".join(named))]
        steps = []
        heir = successor(members, member, leader_candidate) if member["leader"] else None
        if heir is not None:
            steps.append(Step("move_leader", heir["id"], dict(remove=[member["id"]], lead_to=heir["id"])))
        return steps + [Step("remove", member["id"], dict(remove=[member["id"]]))], []
    as_learner = learner is not False
    if leader and as_learner and (member is None or member["learner"]):
        raise ValueError("leader: a learner cannot lead; set learner: false to promote %s first" % name)
    if member is None:
        if leader:
            raise ValueError(
                "leader: member %s does not exist yet; it can take the lead once it has been added, started and has "
                "caught up: ask for leader: true then" % name
            )
        same_host = [m for m in members if _hosts(m["peer_urls"]) & _hosts(peer_urls)]
        if same_host:
            raise ValueError(
                "peer_urls: host %s already has member %s with peer URLs %s; one host holds one member "
                "(remove it first)"
                % (", ".join(sorted(_hosts(peer_urls))), _label(same_host[0]), ", ".join(same_host[0]["peer_urls"]))
            )
        change = dict(add_learners=1) if as_learner else dict(add_voters=1)
        return [Step("add_learner" if as_learner else "add", None, change)], []
    if set(member["peer_urls"]) != set(peer_urls):
        raise ValueError(
            "peer_urls: member %s has peer URLs %s; this module does not change them (remove the member and add it again)"
            % (name, ", ".join(member["peer_urls"]))
        )
    warnings = []
    if learner and not member["learner"]:
        warnings.append("learner: member %s is a voting member; etcd never turns a voter back into a learner" % name)
    steps = []
    if member["learner"] and learner is False:
        steps.append(Step("promote", member["id"], dict(promote=[member["id"]])))
    if leader and not member["leader"]:
        steps.append(Step("move_leader", member["id"], dict(lead_to=member["id"])))
    return steps, warnings


def new_leader(members, steps):
    """Name of the member that takes the lead in ``steps`` (None = leadership does not move)."""
    moves = [s.member_id for s in steps if s.action == "move_leader"]
    return next((m["name"] or m["id"] for m in members if moves and m["id"] == moves[-1]), None)


def membership_text(members):
    """The member list as diff text: one line per member, sorted."""
    lines = []
    for m in members:
        role = "learner" if m["learner"] else "voter"
        lines.append("%s %s %s%s %s" % (m["name"] or "(not started)", m["id"] or "(new)", role, ", leader" if m["leader"] else "", ",".join(m["peer_urls"])))
    return "".join(line + "\n" for line in sorted(lines))


def projected(members, steps, peer_urls, learner):
    """The member list once ``steps`` are done (what check mode shows as the diff's after)."""
    after = [dict(m) for m in members]
    for step in steps:
        if step.action in ("add", "add_learner"):
            after.append(dict(name="", id="", learner=step.action == "add_learner", leader=False, peer_urls=list(peer_urls)))
        elif step.action == "remove":
            after = [m for m in after if m["id"] != step.member_id]
        elif step.action == "promote":
            after = [dict(m, learner=False) if m["id"] == step.member_id else m for m in after]
        elif step.action == "move_leader":
            after = [dict(m, leader=m["id"] == step.member_id) for m in after]
    return after
