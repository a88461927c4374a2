/* SPDX-License-Identifier: Apache-2.0 */
/* Free page reporting: whether the host takes back the guest's free memory.
 * A virtio balloon that negotiated VIRTIO_BALLOON_F_REPORTING (feature bit
 * 5) is told of every free block of 2^page_reporting_order pages (9: 2 MiB
 * on x86-64), and the host drops its backing; the guest's first store to
 * such a block then faults in the host (here: 2 MiB took 99 us to fill once
 * backed, up to 17 ms before). The decision alone, from the sysfs texts,
 * so that it can be tested without a balloon. */
#ifndef SFS_UTIL_PAGEREPORT_H
#define SFS_UTIL_PAGEREPORT_H

#include <stdbool.h>

/* The largest page order the kernel's free lists hold (MAX_PAGE_ORDER on
 * x86-64): a reporting order above it reports nothing. */
#define SFS_MAX_PAGE_ORDER 10

/* order_text: /sys/module/page_reporting/parameters/page_reporting_order
 * (NULL where the kernel has no free page reporting); features: the
 * features files of the bound virtio balloons (strings of '0' and '1',
 * bit 0 first), n of them. Whether free blocks are reported to the host. */
bool sfs_page_reporting_on(const char *order_text, const char *const features[], int n);

#endif
