// CoopQuantum.cpp — an LLVM 14 pass plugin for clang: implicit cooperative multitasking for
// coop (Negele et al. 2017, Sect. 3.1). Use: clang++ -O2 -fpass-plugin=libCoopQuantum.so.
//
// The paper's compiler decrements the running activity's quantum by the number of
// instructions generated since the last check at every procedure entry and backward
// branch, and calls the scheduler when it runs out. This pass does the same on LLVM IR,
// after the optimisation pipeline (OptimizerLast: inlining and unrolling are done, so the
// counts are those of the code that runs and no check hinders an optimisation):
//
//   %q = load i32, @coop_quantum_left        ; initial-exec TLS (runtimes/native/quantum.hpp)
//   %n = sub i32 %q, k
//   store i32 %n, @coop_quantum_left
//   br (%n < 0), %expired, %go               ; x86-64: subl $k, %fs:(...); js
//   expired: call void @coop_quantum_expired()   ; cold, out of line
//
// Where (after LLVM's PlaceSafepoints: function entry and loop back edges):
// - Loop latches: k = the instructions of the loop's own blocks (inner loops charge
//   themselves), the paper's "generated since the last check" count.
// - Short innermost loops (k < -coop-quantum-unroll-below, default 64 IR instructions)
//   are first unrolled, every copy keeping its exits (any trip count), towards 128
//   instructions and at most 8 times: one check then serves several iterations. A short
//   loop LLVM cannot unroll so (k < -coop-quantum-short-loop, default 16) is checked once
//   per chunk of C iterations (C = -coop-quantum-chunk / k, default 256 / k): a register
//   counter in the loop, the check charging k * C; at most C - 1 iterations per loop
//   execution go uncharged.
// - A loop whose body always calls (in a block dominating every latch) a function of this
//   module that has an entry check gets no latch check: the callee switches.
// - Function entry: only in functions that call something (recursion and calls need it);
//   k = the instructions outside loops. Leaf functions without loops get no check.
// - Cycles LoopInfo does not see (irreducible control flow) get a check on each DFS back
//   edge's source block.
// What is not instrumented:
// - coop's own runtime (every function in namespace coop, C symbols coop_*, except
//   coop::internal::Closure<F>::run, which is the user's activity body), and functions
//   annotated __attribute__((annotate("coop_uncooperative"))) or named with
//   -mllvm -coop-quantum-uncooperative=name,... (mangled or as demangled "ns::f"). An
//   annotated function is also kept from being inlined (its body would otherwise be
//   checked inside its callers); the functions it calls are checked as usual (use a
//   coop::uncooperative scope for a dynamic extent).
// Linkage: an instrumented linkonce_odr function (inline functions, templates) becomes
// internal to its object file, so that the linker never picks this instrumented copy for
// code compiled without the plugin (the runtime, the `native` backend) nor the other way.
//
// -mllvm -coop-quantum-stats prints, per module, the checks inserted.
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/UnrollLoop.h"

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::list<std::string> UncooperativeNames("coop-quantum-uncooperative", cl::CommaSeparated,
                                         cl::desc("functions not to instrument (mangled, or demangled ns::f)"));
cl::opt<unsigned> ShortLoop("coop-quantum-short-loop", cl::init(16),
                            cl::desc("innermost loops with fewer instructions are checked once per chunk"));
cl::opt<unsigned> ChunkCost("coop-quantum-chunk", cl::init(256),
                            cl::desc("instructions a chunked loop runs between two checks"));
cl::opt<unsigned> UnrollBelow("coop-quantum-unroll-below", cl::init(64),
                              cl::desc("innermost loops with fewer instructions are unrolled (exits kept)"));
cl::opt<unsigned> UnrollTarget("coop-quantum-unroll-target", cl::init(128),
                               cl::desc("instructions an unrolled loop body should reach"));
cl::opt<unsigned> UnrollMax("coop-quantum-unroll", cl::init(8),
                            cl::desc("short innermost loops are unrolled up to this factor (exits kept) so that one "
                                     "check serves several iterations; 1 = never"));
cl::opt<bool> Stats("coop-quantum-stats", cl::init(false), cl::desc("print the checks inserted per module"));

constexpr const char* kUncoopAttr = "coop-uncooperative";
constexpr const char* kQuantum = "coop_quantum_left";
constexpr const char* kExpired = "coop_quantum_expired";

// annotated — functions with __attribute__((annotate("coop_uncooperative"))).
std::set<Function*> annotated(Module& M) {
    std::set<Function*> out;
    GlobalVariable* GA = M.getNamedGlobal("llvm.global.annotations");
    if (GA == nullptr || !GA->hasInitializer()) return out;
    auto* CA = dyn_cast<ConstantArray>(GA->getInitializer());
    if (CA == nullptr) return out;
    for (Value* Op : CA->operands()) {
        auto* CS = dyn_cast<ConstantStruct>(Op);
        if (CS == nullptr || CS->getNumOperands() < 2) continue;
        auto* F = dyn_cast<Function>(CS->getOperand(0)->stripPointerCasts());
        auto* GV = dyn_cast<GlobalVariable>(CS->getOperand(1)->stripPointerCasts());
        if (F == nullptr || GV == nullptr || !GV->hasInitializer()) continue;
        auto* S = dyn_cast<ConstantDataArray>(GV->getInitializer());
        if (S != nullptr && S->isCString() && S->getAsCString() == "coop_uncooperative") out.insert(F);
    }
    return out;
}

bool named_uncooperative(const Function& F) {
    if (UncooperativeNames.empty()) return false;
    const std::string mangled = F.getName().str();
    const std::string plain = demangle(mangled);
    for (const std::string& n : UncooperativeNames) {
        if (n == mangled || n == plain) return true;
        if (plain.size() > n.size() && plain.compare(0, n.size(), n) == 0 && plain[n.size()] == '(') return true;
    }
    return false;
}

// runtime — coop's own code: never instrumented (Sect. 3.1: the runtime is compiled
// uncooperatively). Closure<F>::run is the activity's body (the user's function inlined).
bool runtime(const Function& F) {
    StringRef n = F.getName();
    if (n.startswith("coop_")) return true;
    if (!(n.startswith("_ZN4coop") || n.startswith("_ZNK4coop") || n.startswith("_ZZN4coop") ||
          n.startswith("_ZZNK4coop")))
        return false;
    return !n.startswith("_ZN4coop8internal7ClosureI");
}

// cost — the IR instructions of a block that become code (no phis, debug info, markers).
unsigned cost(const BasicBlock& BB) {
    unsigned n = 0;
    for (const Instruction& I : BB) {
        if (isa<PHINode>(I) || isa<DbgInfoIntrinsic>(I)) continue;
        if (const auto* II = dyn_cast<IntrinsicInst>(&I)) {
            if (II->isLifetimeStartOrEnd() || II->getIntrinsicID() == Intrinsic::assume) continue;
        }
        ++n;
    }
    return n;
}

// calls — whether F calls anything that is not an intrinsic or inline asm.
bool calls(const Function& F) {
    for (const BasicBlock& BB : F)
        for (const Instruction& I : BB)
            if (const auto* CB = dyn_cast<CallBase>(&I)) {
                if (CB->isInlineAsm()) continue;
                const Function* callee = CB->getCalledFunction();
                if (callee != nullptr && callee->isIntrinsic()) continue;
                return true;
            }
    return false;
}

// PrepareUncooperative — at the pipeline's start: annotated and named functions get the
// attribute the instrumenting pass honours and are kept from being inlined.
struct PrepareUncooperative : PassInfoMixin<PrepareUncooperative> {
    PreservedAnalyses run(Module& M, ModuleAnalysisManager&) {
        bool changed = false;
        std::set<Function*> marked = annotated(M);
        for (Function& F : M)
            if (!F.isDeclaration() && named_uncooperative(F)) marked.insert(&F);
        for (Function* F : marked) {
            F->addFnAttr(kUncoopAttr);
            F->removeFnAttr(Attribute::AlwaysInline);
            F->addFnAttr(Attribute::NoInline);
            changed = true;
        }
        return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
    }
    static bool isRequired() { return true; }
};

struct Site {
    Site(Instruction* b, unsigned cost) : before(b), k(cost) {}
    Site(BasicBlock* h, unsigned cost, unsigned c) : k(cost), chunk(c), header(h) {}
    Instruction* before = nullptr;  // insert the check before this instruction
    unsigned k;                     // quantum units it charges
    unsigned chunk = 0;             // > 0: a chunked loop (header, latches below)
    BasicBlock* header = nullptr;
    SmallVector<BasicBlock*, 2> latches;
};

struct CoopQuantum : PassInfoMixin<CoopQuantum> {
    PreservedAnalyses run(Module& M, ModuleAnalysisManager& MAM) {
        FunctionAnalysisManager& FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
        const std::set<Function*> marked = annotated(M);
        auto skip = [&](Function& F) {
            return F.isDeclaration() || F.hasAvailableExternallyLinkage() || F.hasFnAttribute(Attribute::Naked) ||
                   F.hasFnAttribute(kUncoopAttr) || marked.count(&F) != 0 || named_uncooperative(F) || runtime(F);
        };
        // Phase 0: short innermost loops (< -coop-quantum-unroll-below IR instructions) are
        // unrolled (every copy keeps its exits, so any trip count is fine) towards
        // -coop-quantum-unroll-target instructions, at most -coop-quantum-unroll times, so
        // that one latch check serves several iterations: a check costs two machine
        // instructions, a fifth of a ten-instruction loop, a fortieth of it unrolled eight
        // times. Loops that cannot be unrolled so and stay below -coop-quantum-short-loop
        // are chunked below instead.
        unsigned n_unrolled = 0;
        if (UnrollMax > 1)
            for (Function& F : M) {
                if (skip(F)) continue;
                LoopInfo& LI = FAM.getResult<LoopAnalysis>(F);
                SmallVector<Loop*, 8> shorts;
                for (Loop* L : LI.getLoopsInPreorder()) {
                    if (!L->isInnermost()) continue;
                    unsigned k = 0;
                    for (BasicBlock* BB : L->blocks()) k += cost(*BB);
                    if (k < UnrollBelow && L->getLoopLatch() && L->isSafeToClone())
                        shorts.push_back(L);
                }
                if (shorts.empty()) continue;
                DominatorTree& DT = FAM.getResult<DominatorTreeAnalysis>(F);
                ScalarEvolution& SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
                AssumptionCache& AC = FAM.getResult<AssumptionAnalysis>(F);
                TargetTransformInfo& TTI = FAM.getResult<TargetIRAnalysis>(F);
                OptimizationRemarkEmitter ORE(&F);
                bool changed = false;
                for (Loop* L : shorts) {
                    unsigned k = 0;
                    for (BasicBlock* BB : L->blocks()) k += cost(*BB);
                    const unsigned k1 = std::max(k, 1u);
                    const unsigned count = std::min<unsigned>(UnrollMax, std::max(2u, (UnrollTarget + k1 - 1) / k1));
                    changed |= simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
                    changed |= formLCSSARecursively(*L, DT, &LI, &SE);
                    // A computable trip count: runtime unrolling (one exit test per unrolled
                    // body, the remainder unrolled completely in front); otherwise every copy
                    // keeps its exit test (Force falls back to that, too).
                    const bool counted = !isa<SCEVCouldNotCompute>(SE.getBackedgeTakenCount(L));
                    UnrollLoopOptions ULO{count, /*Force=*/true, /*Runtime=*/counted, /*AllowExpensiveTripCount=*/false,
                                          /*UnrollRemainder=*/true, /*ForgetAllSCEV=*/false};
                    if (UnrollLoop(L, ULO, &LI, &SE, &DT, &AC, &TTI, &ORE, /*PreserveLCSSA=*/true) !=
                        LoopUnrollResult::Unmodified) {
                        ++n_unrolled;
                        changed = true;
                    }
                }
                if (changed) FAM.invalidate(F, PreservedAnalyses::none());
            }

        // Phase 1: which functions get an entry check (the loop rule below needs it).
        std::set<const Function*> entry_checked;
        for (Function& F : M)
            if (!skip(F) && calls(F)) entry_checked.insert(&F);

        // Phase 2: the sites of every function (decided before any CFG change).
        std::map<Function*, std::vector<Site>> sites;
        unsigned n_entry = 0, n_latch = 0, n_chunked = 0, n_skipped_calls = 0, n_irreducible = 0;
        for (Function& F : M) {
            if (skip(F)) continue;
            LoopInfo& LI = FAM.getResult<LoopAnalysis>(F);
            DominatorTree& DT = FAM.getResult<DominatorTreeAnalysis>(F);
            std::vector<Site>& out = sites[&F];
            if (entry_checked.count(&F) != 0) {
                unsigned k = 0;
                for (BasicBlock& BB : F)
                    if (LI.getLoopFor(&BB) == nullptr) k += cost(BB);
                BasicBlock& E = F.getEntryBlock();
                BasicBlock::iterator it = E.getFirstInsertionPt();
                while (isa<AllocaInst>(*it)) ++it;
                out.emplace_back(&*it, k == 0 ? 1u : k);
                ++n_entry;
            }
            for (Loop* L : LI.getLoopsInPreorder()) {
                unsigned k = 0;
                for (BasicBlock* BB : L->blocks())
                    if (LI.getLoopFor(BB) == L) k += cost(*BB);
                if (k == 0) k = 1;
                SmallVector<BasicBlock*, 4> latches;
                L->getLoopLatches(latches);
                if (latches.empty()) continue;
                // A call to a checked function in a block every iteration passes through.
                bool call_checked = false;
                for (BasicBlock* BB : L->blocks()) {
                    bool dominates_all = true;
                    for (BasicBlock* Lt : latches) dominates_all = dominates_all && DT.dominates(BB, Lt);
                    if (!dominates_all) continue;
                    for (Instruction& I : *BB)
                        if (auto* CB = dyn_cast<CallBase>(&I))
                            if (const Function* c = CB->getCalledFunction(); c && entry_checked.count(c))
                                call_checked = true;
                }
                if (call_checked) {
                    ++n_skipped_calls;
                    continue;
                }
                if (L->isInnermost() && k < ShortLoop && !isa<IndirectBrInst>(L->getHeader()->getTerminator()) &&
                    ChunkCost > k) {
                    Site s(L->getHeader(), k, ChunkCost / k);
                    s.latches.append(latches.begin(), latches.end());
                    out.push_back(s);
                    ++n_chunked;
                    continue;
                }
                for (BasicBlock* Lt : latches) {
                    out.emplace_back(Lt->getTerminator(), k);
                    ++n_latch;
                }
            }
            // Cycles without a natural loop (irreducible): a check at each DFS back edge
            // whose target is no loop header.
            std::set<BasicBlock*> on_stack, done;
            std::vector<std::pair<BasicBlock*, unsigned>> stack{{&F.getEntryBlock(), 0}};
            on_stack.insert(&F.getEntryBlock());
            while (!stack.empty()) {
                auto& [BB, i] = stack.back();
                Instruction* T = BB->getTerminator();
                if (T != nullptr && i < T->getNumSuccessors()) {
                    BasicBlock* S = T->getSuccessor(i++);
                    if (on_stack.count(S) != 0) {
                        if (!LI.isLoopHeader(S)) {
                            out.emplace_back(T, cost(*BB) == 0 ? 1u : cost(*BB));
                            ++n_irreducible;
                        }
                    } else if (done.count(S) == 0) {
                        on_stack.insert(S);
                        stack.push_back({S, 0});
                    }
                } else {
                    on_stack.erase(BB);
                    done.insert(BB);
                    stack.pop_back();
                }
            }
        }

        // Phase 3: insert.
        LLVMContext& C = M.getContext();
        Type* I32 = Type::getInt32Ty(C);
        GlobalVariable* Q = M.getNamedGlobal(kQuantum);
        FunctionCallee Expired;
        bool any = false;
        for (auto& [F, list] : sites) {
            if (list.empty()) continue;
            if (!any) {
                any = true;
                if (Q == nullptr)
                    Q = new GlobalVariable(M, I32, false, GlobalValue::ExternalLinkage, nullptr, kQuantum, nullptr,
                                           GlobalValue::InitialExecTLSModel);
                Expired = M.getOrInsertFunction(kExpired, FunctionType::get(Type::getVoidTy(C), false));
                if (auto* EF = dyn_cast<Function>(Expired.getCallee())) {
                    EF->addFnAttr(Attribute::Cold);
                    EF->addFnAttr(Attribute::NoUnwind);
                }
            }
            MDNode* unlikely = MDBuilder(C).createBranchWeights(1, 1 << 20);
            auto emit = [&](Instruction* before, unsigned k) {
                IRBuilder<> B(before);
                LoadInst* q = B.CreateLoad(I32, Q, "coop.q");
                Value* n = B.CreateSub(q, ConstantInt::get(I32, k), "coop.q.left");
                B.CreateStore(n, Q);
                Value* neg = B.CreateICmpSLT(n, ConstantInt::get(I32, 0), "coop.q.expired");
                Instruction* then = SplitBlockAndInsertIfThen(neg, before, false, unlikely);
                IRBuilder<> T(then);
                CallInst* call = T.CreateCall(Expired);
                call->setDebugLoc(before->getDebugLoc());
            };
            for (Site& s : list) {
                if (s.chunk == 0) {
                    emit(s.before, s.k);
                    continue;
                }
                // A counter of iterations left in the chunk: C at loop entry, then down to 1;
                // at 0 the check charges the chunk and the counter restarts.
                BasicBlock* H = s.header;
                PHINode* left = PHINode::Create(I32, 2, "coop.chunk", &H->front());
                Constant* chunk = ConstantInt::get(I32, s.chunk);
                std::set<BasicBlock*> latch_set(s.latches.begin(), s.latches.end());
                for (BasicBlock* P : predecessors(H))
                    if (latch_set.count(P) == 0) left->addIncoming(chunk, P);
                for (BasicBlock* Lt : s.latches) {
                    IRBuilder<> B(Lt->getTerminator());
                    Value* dec = B.CreateSub(left, ConstantInt::get(I32, 1), "coop.chunk.dec");
                    Value* zero = B.CreateICmpEQ(dec, ConstantInt::get(I32, 0), "coop.chunk.done");
                    Value* next = B.CreateSelect(zero, chunk, dec, "coop.chunk.next");
                    // One incoming entry per edge (a latch may branch to the header twice).
                    for (BasicBlock* S : successors(Lt))
                        if (S == H) left->addIncoming(next, Lt);
                    Instruction* then = SplitBlockAndInsertIfThen(zero, Lt->getTerminator(), false, unlikely);
                    emit(then, s.k * s.chunk);
                }
            }
            // Never let the linker pick this copy for uninstrumented code, nor theirs here.
            if (F->hasLinkOnceODRLinkage()) {
                F->setLinkage(GlobalValue::InternalLinkage);
                F->setComdat(nullptr);
                F->setVisibility(GlobalValue::DefaultVisibility);
            }
        }
        if (Stats)
            errs() << "coop-quantum: " << M.getSourceFileName() << ": " << n_entry << " entry, " << n_latch
                   << " latch, " << n_chunked << " chunked-loop, " << n_irreducible
                   << " irreducible-edge checks; " << n_skipped_calls << " loops left to their callees; " << n_unrolled
                   << " short loops unrolled\n";
        return any ? PreservedAnalyses::none() : PreservedAnalyses::all();
    }
    static bool isRequired() { return true; }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
    return {LLVM_PLUGIN_API_VERSION, "CoopQuantum", "1", [](PassBuilder& PB) {
                PB.registerPipelineStartEPCallback(
                    [](ModulePassManager& MPM, OptimizationLevel) { MPM.addPass(PrepareUncooperative()); });
                PB.registerOptimizerLastEPCallback(
                    [](ModulePassManager& MPM, OptimizationLevel) { MPM.addPass(CoopQuantum()); });
                // opt -load-pass-plugin=... -passes=coop-quantum (tests)
                PB.registerPipelineParsingCallback(
                    [](StringRef name, ModulePassManager& MPM, ArrayRef<PassBuilder::PipelineElement>) {
                        if (name == "coop-quantum") {
                            MPM.addPass(PrepareUncooperative());
                            MPM.addPass(CoopQuantum());
                            return true;
                        }
                        return false;
                    });
            }};
}
