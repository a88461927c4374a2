/* SPDX-License-Identifier: Apache-2.0 */
/* Names made of a prefix and decimal numbers joined by dots, as
 * snprintf("%s%llu.%llu...") makes them, and of a name and a suffix, as
 * snprintf("%s%s") does, without snprintf: async-signal-safe (a store is
 * renamed from a signal handler: staging/stage.h) and without the format
 * parser on the open path (one store name an open). */
#ifndef SFS_UTIL_DECNAME_H
#define SFS_UTIL_DECNAME_H

#include <stddef.h>
#include <stdint.h>

/* One byte of a name at *len, stored only while it fits with its NUL. */
static inline void sfs_decname_put(char *buf, size_t size, size_t *len, char c)
{
	if (*len + 1 < size)
		buf[*len] = c;
	(*len)++;
}

/* NUL-terminates a name of len bytes at len or where buf ends; returns len. */
static inline size_t sfs_decname_end(char *buf, size_t size, size_t len)
{
	if (size > 0)
		buf[len < size ? len : size - 1] = '\0';
	return len;
}

/* Writes name, then suffix, into buf of size bytes, as sfs_decname does. */
static inline size_t sfs_name_cat(char *buf, size_t size, const char *name, const char *suffix)
{
	size_t len = 0;
	for (const char *p = name; *p; p++)
		sfs_decname_put(buf, size, &len, *p);
	for (const char *p = suffix; *p; p++)
		sfs_decname_put(buf, size, &len, *p);
	return sfs_decname_end(buf, size, len);
}

/* Writes prefix, then the n numbers in decimal separated by '.', into buf
 * of size bytes, always NUL-terminated, cut short as snprintf would cut it.
 * Returns the length the whole name has (as snprintf returns). */
static inline size_t sfs_decname(char *buf, size_t size, const char *prefix, const uint64_t *v,
				 int n)
{
	size_t len = 0;
	for (const char *p = prefix; *p; p++)
		sfs_decname_put(buf, size, &len, *p);
	for (int i = 0; i < n; i++) {
		if (i > 0)
			sfs_decname_put(buf, size, &len, '.');
		char digits[20]; /* UINT64_MAX has 20 */
		int d = 0;
		uint64_t x = v[i];
		do {
			digits[d++] = (char)('0' + x % 10);
			x /= 10;
		} while (x);
		while (d > 0)
			sfs_decname_put(buf, size, &len, digits[--d]);
	}
	return sfs_decname_end(buf, size, len);
}

#endif
