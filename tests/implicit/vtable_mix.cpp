// vtable_mix.cpp — an inline virtual function defined in two translation units, one compiled
// with the CoopQuantum plugin (VTABLE_SIDE=checked), one without (VTABLE_SIDE=plain). Each
// builds its object and calls the function through the vtable. The linker keeps one copy of
// each shared (linkonce) vtable: the checked side must still run its checked copy and the
// plain side its plain copy, whatever the link order (test_implicit links them one way,
// test_implicit_vtable the other).
#include <cstdint>

#if !defined(VTABLE_SIDE)
#error "define VTABLE_SIDE (checked or plain)"
#endif
#define VT_CAT2(a, b) a##_##b
#define VT_CAT(a, b) VT_CAT2(a, b)

extern "C" long coop_vtable_ext(long);  // test_implicit.cpp: opaque to both sides

struct VtShape {
    virtual ~VtShape() = default;
    virtual long area(long n) {
        unsigned long s = 0;  // unsigned: wraps, no overflow (UBSan)
        for (long i = 0; i < n; ++i) s += static_cast<unsigned long>(coop_vtable_ext(i)) ^ (s >> 3);
        return static_cast<long>(s >> 1);
    }
};

extern "C" long VT_CAT(coop_vtable_call, VTABLE_SIDE)(long n) {
    VtShape* volatile p = new VtShape;  // volatile: no devirtualisation
    VtShape* s = p;
    const long r = s->area(n);
    delete s;
    return r;
}
