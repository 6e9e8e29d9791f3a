; irreducible.ll — check_plugin.py runs the CoopQuantum pass on this IR and checks that every
; cycle of the result passes through a quantum decrement. @irreducible: entry -> {H, A},
; A -> H, H -> {L, A}, L -> H. {H, L} is a natural loop (H dominates L); H -> A -> H is a
; cycle LoopInfo does not see (A is entered from entry too) and never passes L's latch.
; @reducible: an ordinary counted loop (the rule's baseline).
declare i32 @ext(i32)

define i32 @irreducible(i32 %n, i1 %c) {
entry:
  br i1 %c, label %H, label %A

H:
  %x = phi i32 [ 0, %entry ], [ %y1, %A ], [ %l1, %L ]
  %x1 = add i32 %x, 1
  %x2 = mul i32 %x1, 7
  %x3 = xor i32 %x2, %x
  %c1 = icmp slt i32 %x3, %n
  br i1 %c1, label %L, label %A

L:
  %l1 = add i32 %x3, 3
  %l2 = and i32 %l1, 1
  %c2 = icmp eq i32 %l2, 0
  br i1 %c2, label %H, label %exit

A:
  %y = phi i32 [ 0, %entry ], [ %x3, %H ]
  %y1 = add i32 %y, 2
  %c3 = icmp slt i32 %y1, %n
  br i1 %c3, label %H, label %exit

exit:
  %r = phi i32 [ %l1, %L ], [ %y1, %A ]
  ret i32 %r
}

define i32 @reducible(i32 %n) {
entry:
  br label %loop

loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s1, %loop ]
  %s1 = add i32 %s, %i
  %i1 = add i32 %i, 1
  %c = icmp slt i32 %i1, %n
  br i1 %c, label %loop, label %exit

exit:
  ret i32 %s1
}
