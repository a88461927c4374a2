/* SPDX-License-Identifier: Apache-2.0 */
#include "pagereport.h"

#include <stdlib.h>
#include <string.h>

#define F_REPORTING 5 /* VIRTIO_BALLOON_F_REPORTING */

bool sfs_page_reporting_on(const char *order_text, const char *const features[], int n)
{
	if (!order_text)
		return false;
	char *end;
	long order = strtol(order_text, &end, 10);
	if (end == order_text || order < 0 || order > SFS_MAX_PAGE_ORDER)
		return false;
	for (int i = 0; i < n; i++)
		if (features[i] && strlen(features[i]) > F_REPORTING &&
		    features[i][F_REPORTING] == '1')
			return true;
	return false;
}
