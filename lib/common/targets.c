/*
 * targets.c - the known-target table: NBG header `target` words and the
 * names public sources give them (doc/runtime.md, "Target check").
 */
#include <stdio.h>

#include "nbg/targets.h"

static const nbg_target_info table[] = {
	{ 0x7d, "VIPNANOQI_PID0X7D", "Amlogic T931 rev A" },
	{ 0x82, "VIPNANOQ_PID0X82", "Rockchip RK1808/RK3399Pro-era NPU" },
	{ 0x88, "VIPNANOQI_PID0X88", "Amlogic A311D (Khadas VIM3, JeVois-Pro); T931 rev B" },
	{ 0x99, "VIPPICO_V3_PID0X99", "Amlogic S905D3 (Khadas VIM3L)" },
	{ 0x9f, "VIP8000NANOSI_PLUS_PID0X9F", NULL },
	{ 0xa1, "VIPNANOQI_PID0XA1", "Amlogic A1 family" },
	{ 0xad, NULL, "Realtek AmebaPro2" },
	{ 0xb5, "VIP8000NANOSI_PID0XB5", "Rockchip RV1126-era NPU" },
	{ 0xb9, "VIP9000NANOSI_PID0XB9", "Amlogic TM2 family" },
	{ 0xba, "VIP9000ULSI_PID0XBA", NULL },
	{ 0xbe, "VIP9000NANODI_PID0XBE", "Amlogic C2 family" },
	{ 0xc5, "VIP9000NANOS_PID0XC5", "VeriSilicon x86 simulator default" },
	{ 0xe8, "VIP9000NANODI_PID0XE8", "Amlogic" },
	{ 0xee, "VIP9000PICO_PID0XEE", "Allwinner V853 / V851S" },
	{ 0x1000000e, "VIP9000NANOS_PID0X1000000E", "Amlogic A5 family" },
	{ 0x10000016, "VIP9000NANOSI_PLUS_PID0X10000016",
	  "Allwinner T527 (Radxa Cubie A5E), VIPLite 1.13" },
	{ 0x10000020, "VIP9000NANODI_PID0X10000020", NULL },
	{ 0x1000003b, "VIP9000NANODI_PLUS_PID0X1000003B",
	  "Allwinner A733 (Radxa Cubie A7A/A7Z), VIPLite 2.0" },
};

const nbg_target_info *nbg_target_lookup(uint32_t target)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].target == target)
			return &table[i];
	return NULL;
}

const nbg_target_info *nbg_target_at(size_t i)
{
	return i < sizeof(table) / sizeof(table[0]) ? &table[i] : NULL;
}

char *nbg_target_describe(uint32_t target, char *buf, size_t size)
{
	const nbg_target_info *t = nbg_target_lookup(target);
	if (!buf || !size)
		return buf;
	if (!t)
		snprintf(buf, size, "0x%08x (unknown target)", target);
	else
		snprintf(buf, size, "0x%08x (%s%s%s)", target, t->config ? t->config : "no public name",
			 t->soc ? ", " : "", t->soc ? t->soc : "");
	return buf;
}
