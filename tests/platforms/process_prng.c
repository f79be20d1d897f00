/* bcryptprimitives.dll for Wine 8.0, which has none: the one function
 * Rust's standard library (1.78 and later) imports from it on Windows,
 * ProcessPrng, made of advapi32's SystemFunction036 (RtlGenRandom).
 * Put beside sylva.exe for the Wine run only; Windows itself has it. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
