# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which failure domain a new machine goes to (pure).

Rule: the failure domain holding the fewest machines; a tie goes to the one declared first. Applied one
machine at a time from an empty sandbox, this is round-robin (fd-1, fd-2, …, fd-K, fd-1, …), the spread
``sandbox up`` promises; afterwards ``machine create`` refills whichever domain lost a machine.
"""


def failure_domain_names(count):
    return ["fd-%d" % i for i in range(1, count + 1)]


def choose_failure_domain(domains, machines_by_domain):
    """``domains`` in declared order; ``machines_by_domain`` maps a domain to how many machines it holds."""
    return min(domains, key=lambda domain: (machines_by_domain.get(domain, 0), domains.index(domain)))
