/* SPDX-License-Identifier: Apache-2.0 */
/* util/pagereport.c: free page reporting is on only where the kernel has
 * it (its order parameter exists and is an order the free lists hold) and
 * a bound virtio balloon negotiated VIRTIO_BALLOON_F_REPORTING (bit 5). */
#include "../../src/util/pagereport.h"
#include "unit.h"

/* This VM's balloon: bit 5 set (features as sysfs shows them). */
static const char *const reporting[] = {
	"0110010100000000000000000000000010000000000000000000000000000000\n"};
/* A balloon without it (statistics and deflate-on-OOM only). */
static const char *const plain[] = {"0110000000000000000000000000000000000000000000000\n"};

U_TEST(balloon, "a balloon that reports, with reporting in the kernel")
{
	U_CHECK(sfs_page_reporting_on("9\n", reporting, 1), "order 9, bit 5: on");
	U_CHECK(sfs_page_reporting_on("10", reporting, 1), "order 10: on");
	const char *const two[] = {plain[0], reporting[0]};
	U_CHECK(sfs_page_reporting_on("9\n", two, 2), "the second of two balloons reports");
}

U_TEST(off, "no balloon, no bit, no reporting in the kernel, or an order too large")
{
	U_CHECK(!sfs_page_reporting_on("9\n", NULL, 0), "bare metal: no balloon");
	U_CHECK(!sfs_page_reporting_on("9\n", plain, 1), "a balloon without bit 5");
	U_CHECK(!sfs_page_reporting_on(NULL, reporting, 1), "a kernel without page reporting");
	U_CHECK(!sfs_page_reporting_on("11\n", reporting, 1), "order 11 reports nothing");
	U_CHECK(!sfs_page_reporting_on("", reporting, 1), "an empty order");
	const char *const short_text[] = {"01100"};
	U_CHECK(!sfs_page_reporting_on("9", short_text, 1), "features shorter than bit 5");
}
