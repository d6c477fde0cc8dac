/* Test-only stand-in for Windows 10/11's bcryptprimitives.dll under Wine 8.0,
 * which lacks it: Rust >= 1.78's standard library imports ProcessPrng from it.
 * ProcessPrng is forwarded to BCryptGenRandom (the system RNG). Built and
 * installed into the test Wine prefix by scripts/wine_setup.sh; never shipped
 * (Windows has the real DLL). */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
