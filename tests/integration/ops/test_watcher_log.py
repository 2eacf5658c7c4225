#!/usr/bin/env python3
"""The shared watcher's log lines name its cluster zone (issue 25 item 7): with the four
zones of a cluster DNS, the clusterset zone loaded last, a line such as "synchronized the
cluster zone" is prefixed [cluster.local.], not [clusterset.local.] (the zone loaded last
used to be named, whatever the line was about). Zone-specific lines keep their own zone.
"""

import re

import testing
from cluster import Cluster, ZONES

tests = testing.Tests()


@tests.case
def the_watchers_lines_name_the_cluster_zone_not_the_zone_loaded_last(c):
    testing.expect_equal(ZONES[-1], "clusterset.local.", "the clusterset zone is loaded last")
    lines = [line for line in c.log_text().splitlines()
             if re.search(r"synchronized the (cluster|clusterset) zone|list services completed", line)]
    testing.expect(len(lines) >= 3, f"the watcher's lines: {lines}")
    wrong = [line for line in lines if "[cluster.local.] module" not in line]
    testing.expect_equal(wrong, [], "watcher lines naming another zone")


tests.main(fixture=lambda: Cluster())
