# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a new control plane machine goes, and which failure domain gives up a machine. Pure, no I/O.

The rules (docs/rules.md FD1–FD6, Cluster API v1.10+ as v1.14 decides; ties left open are broken by name, so
every choice is deterministic):

FD1  Only failure domains flagged ``control_plane: true`` are candidates. None → new machines get no domain.
FD2  Scale up (also the very first machine): count, per candidate domain, the machines that are up to date
     (not outdated, not deleting); machines without a domain or in a non-candidate domain are ignored.
     Pick the domain with the fewest.
FD3  Ties: the fewest machines in total (outdated included), then the smallest name.
FD4  Scale down, given the eligible set E: if any machine of E is outside the candidate domains (no domain,
     an unknown domain, or one not for the control plane), the bucket is the domain of the *oldest* such
     machine (possibly "no domain"). This beats any balancing.
FD5  Otherwise, among candidate domains holding at least one machine of E, the one with the most machines of
     E; ties: the most machines overall (eligible or not), then the smallest name (Cluster API v1.10+,
     ``PickMost``; v1.7.9 counted every machine first, so an outdated machine in a smaller domain waited
     behind up-to-date ones in a bigger one). A domain without eligible machines is skipped.
FD6  The machine removed is the oldest machine of E inside the bucket.
"""

from __future__ import annotations

from collections import Counter, namedtuple

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import oldest_first

Choice = namedtuple("Choice", "domain rule detail")
ScaleDownChoice = namedtuple("ScaleDownChoice", "machine domain rule detail")


def candidate_domains(failure_domains):
    """FD1: the names of the failure domains flagged for control plane use, sorted."""
    return sorted({fd["name"] for fd in failure_domains or [] if fd.get("control_plane")})


def scale_up_domain(failure_domains, machines, up_to_date):
    """FD1–FD3: the failure domain for the next machine (``Choice``; ``domain`` None when there is none).

    ``up_to_date``: names of the machines that are up to date (deleting machines never count as such).
    """
    candidates = candidate_domains(failure_domains)
    if not candidates:
        return Choice(None, "FD1", "no failure domain is flagged for the control plane")
    live = [m for m in machines if not m.get("deleting")]
    fresh = Counter(m.get("failure_domain") for m in live if m["name"] in up_to_date)
    total = Counter(m.get("failure_domain") for m in machines)
    domain = min(candidates, key=lambda d: (fresh[d], total[d], d))
    counts = ", ".join("%s: %d up to date of %d" % (d, fresh[d], total[d]) for d in candidates)
    return Choice(domain, "FD2", "fewest up-to-date machines (%s)" % counts)


def scale_down_choice(failure_domains, machines, eligible):
    """FD4–FD6: the machine to remove from ``eligible`` (a subset of ``machines``) and its bucket.

    Returns a ``ScaleDownChoice``; ``machine`` is None only when ``eligible`` is empty.
    """
    if not eligible:
        return ScaleDownChoice(None, None, None, "no eligible machine")
    candidates = set(candidate_domains(failure_domains))
    outside = [m for m in eligible if m.get("failure_domain") not in candidates]
    if outside:
        domain = oldest_first(outside)[0].get("failure_domain")
        rule = "FD4"
        detail = "machines outside the control plane failure domains go first; the oldest of them is in %s" % (
            _label(domain)
        )
    else:
        total = Counter(m.get("failure_domain") for m in machines)
        in_e = Counter(m.get("failure_domain") for m in eligible)
        domain = min(in_e, key=lambda d: (-in_e[d], -total[d], d))
        rule = "FD5"
        detail = "%s holds the most eligible machines (%d of its %d)" % (domain, in_e[domain], total[domain])
    victim = oldest_first([m for m in eligible if m.get("failure_domain") == domain])[0]
    return ScaleDownChoice(victim["name"], domain, rule, detail + "; FD6: %s is the oldest eligible there" % victim["name"])


def _label(domain):
    return domain if domain is not None else "no failure domain"
